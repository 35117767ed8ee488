"""Accuracy of LLM weight quantization: perplexity of each quantized mode
next to its float original on held-out text, the largest logit difference,
and the size of each exported program.

    ./torchlight exec python3 -m torchlight.llm.quant_eval                  # both models
    ./torchlight exec python3 -m torchlight.llm.quant_eval --models shipped --sizes

Models:
  shipped  examples/llm/models/brown_gpt.pt, the byte-level GPT the demo
           uses; held-out text: the Brown corpus's validation samples (every
           10th, which training never saw; examples/llm/fetch_corpus.sh).
  gpt2     the GPT-2 124M shape (12 layers, 12 heads, width 768, vocab
           50257, context 1024) with RANDOM weights (GPT-2's init, seed 0):
           its perplexity is near the vocabulary size for every mode, so only
           the differences between modes say anything. The same held-out
           text is fed as byte ids.

Perplexity: exp of the mean next-token cross-entropy over non-overlapping
windows of the model's context (the first --eval-tokens tokens of the
text), each window scored without a KV cache. "max |dlogit|" is the largest
absolute logit difference from the float model over every scored position.
"""

from __future__ import annotations

import argparse
import copy
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import torch
from torch import nn
from torch.nn import functional as F

from torchlight.llm.gpt import GPT, GPTConfig
from torchlight.llm.quantize import quantize_model

REPO = Path(__file__).resolve().parents[3]
SHIPPED = REPO / "examples" / "llm" / "models" / "brown_gpt.pt"
CORPUS = Path(os.environ.get("TORCHLIGHT_ASSETS_DIR", "/var/cache/torchlight/assets")) \
    / "corpus" / "brown"

# key -> (label, qmode, group size, embedding spec); "float" always runs first.
MODES: Dict[str, Tuple[str, Optional[str], int, Optional[str]]] = {
    "float": ("float", None, 0, None),
    "int8": ("int8", "int8", 0, None),
    "int8-e8": ("int8 -E 8,0", "int8", 0, "8,0"),
    "8da4w-g128": ("8da4w -G 128", "8da4w", 128, None),
    "8da4w-g32": ("8da4w -G 32", "8da4w", 32, None),
    "8da4w-g128-e4": ("8da4w -G 128 -E 4,32", "8da4w", 128, "4,32"),
    "4w-g128": ("4w -G 128", "4w", 128, None),
}


@dataclass
class Row:
    label: str
    perplexity: float
    max_logit_diff: float
    pte_bytes: Optional[int]
    skipped: List[str]


def held_out_tokens(corpus_dir: Path, count: int, tokenizer_json: Optional[Path] = None
                    ) -> torch.Tensor:
    """The first `count` tokens of the validation text: bytes, or the ids of
    a byte-level BPE tokenizer.json."""
    from torchlight.llm.corpus import train_val_split
    _, val = train_val_split(corpus_dir)
    if tokenizer_json is not None:
        from torchlight.llm.bpe import ByteLevelBPE
        return torch.tensor(ByteLevelBPE.load_tokenizer_json(tokenizer_json).encode(val)[:count],
                            dtype=torch.long)
    data = val.encode("utf-8")[:count]
    return torch.tensor(list(data), dtype=torch.long)


def windows(tokens: torch.Tensor, context: int) -> List[torch.Tensor]:
    """Non-overlapping windows of context + 1 tokens (inputs and targets)."""
    step = context
    return [tokens[i:i + step + 1] for i in range(0, len(tokens) - 1, step)
            if len(tokens[i:i + step + 1]) > 1]


@torch.no_grad()
def evaluate(model: nn.Module, chunks: List[torch.Tensor],
             reference: Optional[List[torch.Tensor]] = None) \
        -> Tuple[float, float, List[torch.Tensor]]:
    """(perplexity of `model`, max |logit - reference logit|, its logits per
    chunk) over `chunks`; the difference is 0 without a reference."""
    total, count, max_diff, all_logits = 0.0, 0, 0.0, []
    for i, chunk in enumerate(chunks):
        inputs, targets = chunk[:-1].unsqueeze(0), chunk[1:]
        logits = model(inputs)[0]
        total += float(F.cross_entropy(logits, targets, reduction="sum"))
        count += len(targets)
        if reference is not None:
            max_diff = max(max_diff, float((logits - reference[i]).abs().max()))
        all_logits.append(logits)
    return math.exp(total / count), max_diff, all_logits


def program_bytes(model: nn.Module) -> int:
    import torchlight
    from torchlight.llm import export_llm
    prog = torchlight.to_edge(export_llm(model)).to_executorch(
        torchlight.ExecutorchBackendConfig(check_kernels=False))
    return len(prog.buffer)


def report(name: str, float_model: nn.Module, chunks: List[torch.Tensor], sizes: bool,
           modes: List[str]) -> List[Row]:
    rows = []
    float_model.eval()
    reference = None  # the float model's logits per chunk (the first mode is float)
    for key in ["float"] + [m for m in modes if m != "float"]:
        label, qmode, group, embedding = MODES[key]
        start = time.time()
        model = float_model if qmode is None and embedding is None else \
            copy.deepcopy(float_model)
        skipped = quantize_model(model, qmode, group or 128, embedding) \
            if model is not float_model else []
        ppl, diff, logits = evaluate(model, chunks, reference)
        if reference is None:
            reference = logits
        size = program_bytes(model) if sizes else None
        rows.append(Row(label, ppl, diff, size, skipped))
        print(f"  [{name}] {label}: perplexity {ppl:.4f}, max |dlogit| {diff:.4f}"
              f"{f', {size / 2**20:.2f} MiB' if size else ''} ({time.time() - start:.0f} s)",
              file=sys.stderr, flush=True)
        if model is not float_model:
            del model
    return rows


def print_table(name: str, rows: List[Row], tokens: int) -> None:
    base = rows[0].perplexity
    print(f"\n{name} ({tokens} held-out tokens)\n")
    print("| mode | perplexity | vs float | max abs logit diff | .pte size | float linears |")
    print("|---|---:|---:|---:|---:|---|")
    for r in rows:
        size = f"{r.pte_bytes / 2**20:.2f} MiB" if r.pte_bytes else "-"
        print(f"| {r.label} | {r.perplexity:.4f} | {100 * (r.perplexity / base - 1):+.2f}% | "
              f"{r.max_logit_diff:.4f} | {size} | {', '.join(r.skipped) or '-'} |")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="shipped,gpt2", help="comma list: shipped, gpt2")
    p.add_argument("--corpus-dir", type=Path, default=CORPUS)
    p.add_argument("--checkpoint", type=Path, default=SHIPPED,
                   help="the 'shipped' model: a train_gpt.py checkpoint (byte-level, or BPE "
                        "with its tokenizer.json beside it)")
    p.add_argument("--eval-tokens", type=int, default=32768,
                   help="held-out tokens scored for the shipped model")
    p.add_argument("--gpt2-eval-tokens", type=int, default=4096)
    p.add_argument("--modes", default=",".join(MODES),
                   help=f"comma list of: {', '.join(MODES)}")
    p.add_argument("--sizes", action="store_true", help="export each mode and report its size")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = p.parse_args(argv)
    modes = args.modes.split(",")
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        print(f"error: unknown mode {unknown[0]!r}; known: {', '.join(MODES)}", file=sys.stderr)
        return 2
    if args.threads:
        torch.set_num_threads(args.threads)
    for name in args.models.split(","):
        if name == "shipped":
            from torchlight.llm.gpt_weights import load_nanogpt_checkpoint
            checkpoint = torch.load(args.checkpoint, map_location="cpu", weights_only=True)
            model = load_nanogpt_checkpoint(checkpoint)
            tokenizer = checkpoint.get("tokenizer", "bytes")
            bpe = None if tokenizer == "bytes" else args.checkpoint.parent / tokenizer
            tokens = held_out_tokens(args.corpus_dir, args.eval_tokens, bpe)
            title = (f"shipped model ({args.checkpoint.name}, "
                     f"{'byte-level' if bpe is None else 'BPE ' + tokenizer} GPT, "
                     "Brown validation text)")
        elif name == "gpt2":
            torch.manual_seed(0)
            model = GPT(GPTConfig(block_size=1024, vocab_size=50257, n_layer=12, n_head=12,
                                  n_embd=768))
            tokens = held_out_tokens(args.corpus_dir, args.gpt2_eval_tokens)
            title = "GPT-2 124M shape, RANDOM weights (GPT-2 init, seed 0)"
        else:
            print(f"error: unknown model {name!r} (shipped, gpt2)", file=sys.stderr)
            return 2
        chunks = windows(tokens, model.max_seq_len)
        rows = report(name, model, chunks, args.sizes, modes)
        print_table(title, rows, sum(len(c) - 1 for c in chunks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
