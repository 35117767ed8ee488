"""LLM speed of Torchlight's runner on a model shape at a precision.

    ./torchlight bench llm --shape {stories15m,stories110m,gpt2} --quant {fp32,int8,8da4w,4w}
                           [--group-size G] --threads N [--prompt-tokens P]
                           [--new-tokens T] [--xnnpack] [--fuse-linears] [--rounds R] [--json]

Builds the shape with random weights (speed does not depend on the values),
quantizes it, exports it (cached under build/bench-llm by shape, precision
and exporter source), runs it through the real runner (`torchlight llm`),
and prints a table; with --json, one JSON line with decode_tok_s,
prefill_tok_s, ttft_ms, weight_bytes_per_token, peak_rss_bytes, the KV
cache's bytes, and the memory roofline: the read bandwidth one run of
build/release/bench/llm/torchlight_read_bandwidth measures over an array
of the weights' size with the same threads, and the share of it decode
reaches (tok/s x weight bytes per token / bandwidth). With --rounds R, the
CLI and the probe run R times side by side (alternating which goes first);
the figures are those of the median decode's round, and roofline_shares
lists each round's share of its own probe.

Shapes: stories15m = Llama dim 288, 6 layers, 6 heads, hidden 768, vocab
32000, seq 256; stories110m = dim 768, 12 layers, 12 heads, hidden 2048,
vocab 32000, seq 1024 (both with the classifier shared with the embedding);
gpt2 = GPT-2 124M (12 layers, 12 heads, 768 wide, vocab 50257, context 1024).
Precisions: fp32; int8 (weight-only int8 per channel on every linear, the
classifier included, and an 8-bit embedding); 8da4w (int8 dynamic
activations, int4 group-wise weights on every linear, the classifier
included, and a 4-bit embedding); 4w (int4 group-wise weight-only on every
linear, the classifier included, and a 4-bit embedding). --xnnpack lowers with XnnpackPartitioner
(8da4w linears run as XNNPACK's qd8-f32-qb4w fully-connected). With
--fuse-linears, Llama shapes are exported with each block's wq/wk/wv and
w1/w3 fused into one linear each (torchlight.llm.fuse_linears, before
quantization: 4 linears a layer instead of 7).

The prompt is exactly --prompt-tokens tokens: a synthetic llama2.c
tokenizer whose pieces are single characters maps each prompt character to
one token (BOS and the leading space piece included in the count).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

CLI = REPO / "build" / "release" / "bin" / "torchlight"
BANDWIDTH = REPO / "build" / "release" / "bench" / "llm" / "torchlight_read_bandwidth"
SHAPES = ("stories15m", "stories110m", "gpt2")
# Positions each shape's KV cache holds (its context).
CONTEXT = {"stories15m": 256, "stories110m": 1024, "gpt2": 1024}
QUANTS = ("fp32", "int8", "8da4w", "4w")
BOS_ID = 1


def build_model(shape: str):
    """The shape with N(0, 0.02) weights, seeded."""
    import torch

    from torchlight.llm import GPT, GPTConfig, Llama, LlamaConfig

    torch.manual_seed(0)
    if shape == "stories15m":
        model = Llama(LlamaConfig(dim=288, hidden_dim=768, n_layers=6, n_heads=6, n_kv_heads=6,
                                  vocab_size=32000, max_seq_len=CONTEXT[shape]))
    elif shape == "stories110m":
        model = Llama(LlamaConfig(dim=768, hidden_dim=2048, n_layers=12, n_heads=12,
                                  n_kv_heads=12, vocab_size=32000, max_seq_len=CONTEXT[shape]))
    elif shape == "gpt2":
        model = GPT(GPTConfig(block_size=CONTEXT[shape], vocab_size=50257, n_layer=12, n_head=12, n_embd=768))
    else:
        raise SystemExit(f"unknown shape {shape!r} ({', '.join(SHAPES)})")
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.02)
    return model.eval()


def quantize(model, quant: str, group_size: int):
    """The model with every linear (classifier included) and the embedding
    quantized as `quant` says; fp32 returns it unchanged."""
    if quant == "fp32":
        return model
    try:
        from torchlight.llm.quantize import quantize_model
    except ImportError as e:
        raise SystemExit(f"--quant {quant}: LLM weight quantization is not available in this "
                         f"checkout ({e})")
    if quant == "int8":
        skipped = quantize_model(model, qmode="int8", embedding="8,0")
    else:
        skipped = quantize_model(model, qmode=quant, group_size=group_size,
                                 embedding=f"4,{group_size}")
    if skipped:
        raise SystemExit(f"--quant {quant}: linears {', '.join(skipped)} cannot take group "
                         f"size {group_size}")
    return model


def weight_bytes(model) -> tuple[int, int]:
    """(bytes of weights one decode step reads, bytes of KV cache).

    Every parameter and buffer counts once (tied tensors are one), except
    KV caches and RoPE tables, which are not weights, and embedding tables
    that are only looked up (one row per token). Quantized linears count
    what their fused kernels read (passes/fuse_quantized_linears.py): 8da4w
    and 4w weights packed two a byte, and no zero points."""
    import torch

    tensors = {}
    for name, t in list(model.named_parameters()) + list(model.named_buffers()):
        tensors.setdefault(id(t), (name, t))
    packed, unread = set(), set()
    for module in model.modules():
        kind = type(module).__name__
        if kind in ("Int8DynActInt4WeightLinear", "Int8WeightOnlyLinear", "Int4WeightOnlyLinear"):
            unread.add(id(module.zeros))
        if kind in ("Int8DynActInt4WeightLinear", "Int4WeightOnlyLinear"):
            packed.add(id(module.weight))
    read, cache = 0, 0
    lookup_tables = _lookup_only_embeddings(model)
    for key, (name, t) in tensors.items():
        nbytes = t.numel() * t.element_size()
        if key in unread:
            continue
        if key in packed:
            nbytes //= 2
        if "cache" in name:
            cache += nbytes
        elif any(key in name for key in ("freqs", "rope", "cos_table", "sin_table")):
            continue
        elif any(name.startswith(prefix + ".") for prefix in lookup_tables) and t.dim() >= 1:
            read += nbytes // max(1, t.shape[0])  # one row per token
        else:
            read += nbytes
    del torch
    return read, cache


def _lookup_only_embeddings(model) -> list[str]:
    """Names of embedding modules whose table no other module reads (an
    untied token embedding, GPT-2's position table)."""
    used_elsewhere = set()
    for name, module in model.named_modules():
        if "Embedding" in type(module).__name__ or "embedding" in type(module).__name__.lower():
            continue
        for p in module.parameters(recurse=False):
            used_elsewhere.add(id(p))
        for b in module.buffers(recurse=False):
            used_elsewhere.add(id(b))
    names = []
    for name, module in model.named_modules():
        kind = type(module).__name__.lower()
        if "embedding" in kind:
            own = list(module.parameters(recurse=False)) + list(module.buffers(recurse=False))
            if not any(id(t) in used_elsewhere for t in own):
                names.append(name)
    return names


def synthetic_tokenizer(path: Path, vocab_size: int) -> None:
    """A llama2.c tokenizer.bin: <unk>, BOS, EOS, 256 byte pieces, the
    printable characters, then filler that never matches. No multi-character
    piece matches text, so every prompt character is one token."""
    pieces = [b"<unk>", b"\n<s>\n", b"\n</s>\n"] + [b"<0x%02X>" % b for b in range(256)]
    pieces += [bytes([c]) for c in range(32, 127)]
    n = 0
    while len(pieces) < vocab_size:
        pieces.append(b"\x01filler%d" % n)
        n += 1
    with open(path, "wb") as f:
        f.write(struct.pack("<i", max(len(p) for p in pieces)))
        for piece in pieces:
            f.write(struct.pack("<fi", 0.0, len(piece)) + piece)


def _exporter_digest() -> str:
    """Changes whenever the exporter's source does, so cached programs are
    re-exported after any change to it."""
    h = hashlib.sha256()
    for path in sorted((REPO / "python" / "torchlight").rglob("*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def program_tag(shape: str, quant: str, group_size: int, xnnpack: bool = False,
                fuse_linears: bool = False, kv_cache_dtype: str = "fp32") -> str:
    """The stem of the shape's program files, before the exporter digest;
    "-fused" marks a Llama exported with fuse_linears, "-kv16" float16 KV
    caches."""
    fused = fuse_linears and shape != "gpt2"
    return f"{shape}-{quant}" + ("-xnnpack" if xnnpack else "") + \
        ("-fused" if fused else "") + ("-kv16" if kv_cache_dtype == "fp16" else "") + \
        (f"-g{group_size}" if quant in ("8da4w", "4w") else "")


def programs_of(workdir: Path, tag: str) -> list[Path]:
    """The .pte files of `tag` in workdir, one per exporter digest, oldest
    first; exactly the tag (stories15m-int8 is not stories15m-int8-fused)."""
    found = [p for p in workdir.glob(f"{tag}-*.pte")
             if re.fullmatch(r"[0-9a-f]{12}", p.stem[len(tag) + 1:])]
    return sorted(found, key=lambda p: p.stat().st_mtime)


def export_program(shape: str, quant: str, group_size: int, workdir: Path,
                   xnnpack: bool = False, fuse_linears: bool = False,
                   kv_cache_dtype: str = "fp32") -> tuple[Path, dict]:
    """The shape's program at `quant` (exported once per exporter source),
    and its facts: weight and KV cache bytes, vocab size."""
    tag = program_tag(shape, quant, group_size, xnnpack, fuse_linears, kv_cache_dtype)
    pte = workdir / f"{tag}-{_exporter_digest()}.pte"
    facts_path = pte.with_suffix(".json")
    if pte.exists() and facts_path.exists():
        return pte, json.loads(facts_path.read_text())
    import torchlight
    from torchlight.llm import export_llm
    from torchlight.llm.metadata import llm_metadata_methods

    model = build_model(shape)
    if fuse_linears and shape != "gpt2":  # GPT-2's attention is one c_attn already
        from torchlight.llm.fuse_linears import fuse_linears as fuse
        fuse(model)
    if kv_cache_dtype == "fp16":
        from torchlight.llm.kv_cache import use_float16_kv_caches
        use_float16_kv_caches(model)
    model = quantize(model, quant, group_size)
    read, cache = weight_bytes(model)
    vocab = model.config.vocab_size
    methods = llm_metadata_methods(model, bos_id=BOS_ID)
    exported = export_llm(model, last_logits_only=True)
    if xnnpack:
        from torchlight.backends.xnnpack import XnnpackPartitioner
        edge = torchlight.to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()],
                                                      constant_methods=methods)
    else:
        edge = torchlight.to_edge(exported, constant_methods=methods)
    program = edge.to_executorch()
    for old in programs_of(workdir, tag):
        old.unlink()  # programs (and their facts) of an older exporter
        old.with_suffix(".json").unlink(missing_ok=True)
    program.save(str(pte))
    facts = {"weight_bytes_per_token": read, "kv_cache_bytes": cache, "vocab_size": vocab}
    facts_path.write_text(json.dumps(facts))
    return pte, facts


def read_bandwidth(nbytes: int, threads: int) -> float:
    """GB/s one run of the read-bandwidth probe measures over nbytes."""
    if not BANDWIDTH.exists():
        raise SystemExit(f"{BANDWIDTH} is missing: run ./torchlight build")
    out = subprocess.run([str(BANDWIDTH), str(nbytes), str(threads), "20"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)["gb_per_s"]


def run(args) -> dict:
    workdir = args.workdir
    workdir.mkdir(parents=True, exist_ok=True)
    fuse = getattr(args, "fuse_linears", False)
    kv_cache_dtype = getattr(args, "kv_cache_dtype", "fp32")
    pte, facts = export_program(args.shape, args.quant, args.group_size, workdir, args.xnnpack,
                                fuse, kv_cache_dtype)
    tokenizer = workdir / f"tokenizer-{facts['vocab_size']}.bin"
    if not tokenizer.exists():
        synthetic_tokenizer(tokenizer, facts["vocab_size"])
    # The runner adds BOS and, as SentencePiece does, a leading space piece;
    # every character after them is one token.
    prompt = ("abcdefghijklmnopqrstuvwxyz " * 64)[:max(1, args.prompt_tokens - 2)]
    stats_path = workdir / "stats.json"
    cmd = [str(args.cli), "llm", "--model", str(pte), "--tokenizer", str(tokenizer),
           "--prompt", prompt, "--max-new-tokens", str(args.new_tokens), "--temperature", "0",
           "--ignore-eos", "--threads", str(args.threads), "--stats-json", str(stats_path),
           "--quiet"]
    # Each round is one run of the CLI and one of the read probe, in
    # alternating order; the machine's read bandwidth drifts between
    # minutes (2-4x on the 2-core VMs this project runs on), so a share is
    # taken within a round, from a run and the probe next to it.
    rounds = []
    for r in range(getattr(args, "rounds", 1)):
        if r % 2:
            bandwidth = read_bandwidth(facts["weight_bytes_per_token"], args.threads)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        stats = json.loads(stats_path.read_text())
        if r % 2 == 0:
            bandwidth = read_bandwidth(facts["weight_bytes_per_token"], args.threads)
        rounds.append((stats, bandwidth))
    middle = sorted(range(len(rounds)), key=lambda i: rounds[i][0]["decode_tokens_per_s"])
    stats, bandwidth = rounds[middle[len(rounds) // 2]]  # the median decode's round
    turn = stats  # totals over the one turn
    decode = turn["decode_tokens_per_s"]
    roofline = bandwidth * 1e9 / facts["weight_bytes_per_token"]
    shares = [st["decode_tokens_per_s"] * facts["weight_bytes_per_token"] / (bw * 1e9)
              for st, bw in rounds]
    # The KV cache a decode step reads too (keys and values up to its
    # position), averaged over the decoded positions (P..P+T-2 read P+1..P+T-1
    # rows); not in the roofline (the is weights only), but 14-23% on
    # top of stories15m's quantized weights.
    mean_positions = turn["prompt_tokens"] + turn["generated_tokens"] / 2
    kv_read = facts["kv_cache_bytes"] * mean_positions / CONTEXT[args.shape]
    return {
        "shape": args.shape, "quant": args.quant, "xnnpack": args.xnnpack,
        "kv_cache_dtype": kv_cache_dtype,
        "fuse_linears": fuse and args.shape != "gpt2",
        "group_size": args.group_size if args.quant in ("8da4w", "4w") else None,
        "threads": args.threads, "prompt_tokens": turn["prompt_tokens"],
        "new_tokens": turn["generated_tokens"],
        "decode_tok_s": decode, "prefill_tok_s": turn["prefill_tokens_per_s"],
        "ttft_ms": turn["time_to_first_token_ms"],
        "weight_bytes_per_token": facts["weight_bytes_per_token"],
        "kv_cache_bytes": facts["kv_cache_bytes"],
        "peak_rss_bytes": stats["peak_rss_bytes"],
        "read_gb_per_s": bandwidth, "roofline_tok_s": roofline,
        "roofline_share": decode / roofline,
        "rounds": len(rounds),
        "roofline_shares": shares,
        "decode_tok_s_rounds": [st["decode_tokens_per_s"] for st, _ in rounds],
        "read_gb_per_s_rounds": [bw for _, bw in rounds],
        "kv_bytes_per_token": kv_read,
        "roofline_share_with_kv": decode * (facts["weight_bytes_per_token"] + kv_read) / (bandwidth * 1e9),
        "program_bytes": pte.stat().st_size,
    }


def print_table(r: dict) -> None:
    mib = 2 ** 20
    rows = [
        ("model", f"{r['shape']} {r['quant']}" + (f" g{r['group_size']}" if r["group_size"] else "")
         + (" (XNNPACK)" if r["xnnpack"] else "")
         + (" (fused linears)" if r["fuse_linears"] else "")
         + (" (float16 KV cache)" if r["kv_cache_dtype"] == "fp16" else "")),
        ("threads", r["threads"]),
        ("prompt / new tokens", f"{r['prompt_tokens']} / {r['new_tokens']}"),
        ("prefill tok/s", f"{r['prefill_tok_s']:.1f}"),
        ("decode tok/s", f"{r['decode_tok_s']:.1f}"),
        ("time to first token", f"{r['ttft_ms']:.1f} ms"),
        ("weights read per token", f"{r['weight_bytes_per_token'] / mib:.1f} MiB"),
        ("read bandwidth (same size)", f"{r['read_gb_per_s']:.1f} GB/s"),
        ("roofline decode", f"{r['roofline_tok_s']:.1f} tok/s"),
        ("share of roofline", f"{100 * r['roofline_share']:.0f}%"
         + (f" (rounds: {', '.join(f'{100 * x:.0f}%' for x in r['roofline_shares'])})"
            if r["rounds"] > 1 else "")),
        ("KV cache read per token", f"{r['kv_bytes_per_token'] / mib:.1f} MiB (share with it: "
                                    f"{100 * r['roofline_share_with_kv']:.0f}%)"),
        ("peak RSS", f"{r['peak_rss_bytes'] / mib:.1f} MiB (weights + KV cache "
                     f"{(r['weight_bytes_per_token'] + r['kv_cache_bytes']) / mib:.1f} MiB)"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="torchlight bench llm", description=__doc__.split("\n\n")[0])
    p.add_argument("--shape", choices=SHAPES, default="stories110m")
    p.add_argument("--quant", choices=QUANTS, default="fp32")
    p.add_argument("--group-size", type=int, default=32, choices=(32, 64, 128, 256),
                   help="8da4w and 4w weight group size (default 32)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--prompt-tokens", type=int, default=128)
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--xnnpack", action="store_true", help="delegate to XNNPACK")
    p.add_argument("--fuse-linears", dest="fuse_linears", action=argparse.BooleanOptionalAction,
                   default=False,
                   help="Llama shapes: one linear for each block's wq/wk/wv and one for w1/w3 "
                        "(default: the separate linears)")
    p.add_argument("--kv-cache-dtype", choices=("fp32", "fp16"), default="fp32",
                   help="the KV caches' dtype (fp16: stored float16, read as float32)")
    p.add_argument("--rounds", type=int, default=1,
                   help="runs of the CLI, each beside a run of the read probe; the figures "
                        "are the median decode's run, and each round's roofline share is "
                        "listed (default 1)")
    p.add_argument("--json", action="store_true", help="print one JSON line")
    p.add_argument("--cli", type=Path, default=CLI, help="the torchlight CLI to measure")
    p.add_argument("--workdir", type=Path, default=REPO / "build" / "bench-llm")
    args = p.parse_args(argv)
    if args.prompt_tokens < 1 or args.new_tokens < 2 or args.threads < 1 or args.rounds < 1:
        p.error("--prompt-tokens must be >= 1, --new-tokens >= 2, --threads >= 1, --rounds >= 1")
    if not args.cli.exists():
        raise SystemExit(f"{args.cli} is missing: run ./torchlight build first")
    result = run(args)
    if args.json:
        print(json.dumps(result))
    else:
        print_table(result)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()
