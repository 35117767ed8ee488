"""export_llama with upstream ExecuTorch's flags: a Llama checkpoint (or
random weights of a named shape) to a .pte laid out as upstream's runner
expects, which `torchlight llm` runs.

    ./torchlight export-llm -c consolidated.pth -p params.json -kv \\
        --use_sdpa_with_kv_cache -X -qmode 8da4w -G 128 -E 4,32 \\
        --metadata '{"get_bos_id":1, "get_eos_ids":[2]}' --output_name llama.pte

The program: forward(tokens [1, T] int64, input_pos [1] int64) -> logits
[1, vocab] (all positions' [1, T, vocab] with --generate_full_logits), the
KV caches as mutable buffers; without -kv, forward(tokens [1, T]) and the
runner re-feeds the sequence. Attention with --use_sdpa_with_kv_cache is
llama::update_cache + llama::custom_sdpa (upstream's names; --attention_ops
torchlight keeps ours, torchlight::sdpa_with_kv_cache with every position
in input_pos). Metadata methods: get_bos_id, get_eos_ids, get_max_seq_len,
get_max_context_len, get_n_layers, get_vocab_size, use_kv_cache,
use_sdpa_with_kv_cache, enable_dynamic_shape, and get_tokenizer (the
tokenizer's file name) with --tokenizer_path.

Ours beyond upstream's flags: --fuse-linears fuses each block's wq/wk/wv and
w1/w3 into one linear each (fuse_linears.py); the program computes the same
logits with 4 linears a layer instead of 7. Off by default: on a quiet
machine it measured no faster (bench/README.md, session 16).

Checkpoints (-c): Meta .pth with -p params.json, a Hugging Face directory or
.safetensors, llama2.c .bin, nanoGPT ckpt.pt (checkpoints.py). Without -c,
the weights are random, of --model's shape (or -p's).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import List, Optional

import torch

# Shapes of the models upstream's --model names (params.json values).
MODEL_PARAMS = {
    "stories110m": dict(dim=768, n_layers=12, n_heads=12, vocab_size=32000, multiple_of=32,
                        norm_eps=1e-5),
    "stories15m": dict(dim=288, n_layers=6, n_heads=6, vocab_size=32000, multiple_of=32,
                       norm_eps=1e-5),
    "llama2": dict(dim=4096, n_layers=32, n_heads=32, vocab_size=32000, multiple_of=256,
                   norm_eps=1e-5),
    "llama3": dict(dim=4096, n_layers=32, n_heads=32, n_kv_heads=8, vocab_size=128256,
                   multiple_of=1024, ffn_dim_multiplier=1.3, norm_eps=1e-5, rope_theta=500000.0),
    "llama3_1": dict(dim=4096, n_layers=32, n_heads=32, n_kv_heads=8, vocab_size=128256,
                     multiple_of=1024, ffn_dim_multiplier=1.3, norm_eps=1e-5,
                     rope_theta=500000.0, use_scaled_rope=True),
    "llama3_2": dict(dim=2048, n_layers=16, n_heads=32, n_kv_heads=8, vocab_size=128256,
                     multiple_of=256, ffn_dim_multiplier=1.5, norm_eps=1e-5,
                     rope_theta=500000.0, use_scaled_rope=True),
}
# BOS / EOS of each family, as upstream's metadata defaults.
FAMILY_IDS = {"llama3": (128000, [128001, 128009])}
DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="export_llama", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="llama3", choices=sorted(MODEL_PARAMS),
                   help="the model's shape without -c / -p, and its family's BOS/EOS")
    p.add_argument("-c", "--checkpoint", type=Path, help="checkpoint file or directory")
    p.add_argument("-p", "--params", type=Path, help="Meta's params.json")
    p.add_argument("-kv", "--use_kv_cache", action="store_true", help="export with a KV cache")
    p.add_argument("--use_sdpa_with_kv_cache", action="store_true",
                   help="attention as llama::update_cache + llama::custom_sdpa")
    p.add_argument("--attention_ops", choices=("llama", "torchlight"), default="llama",
                   help="operator naming with --use_sdpa_with_kv_cache: upstream's llama:: "
                        "(default) or torchlight::sdpa_with_kv_cache (our layout)")
    p.add_argument("--use_fused_sdpa_with_kv_cache", action="store_true",
                   help="one llama::sdpa_with_kv_cache per layer instead of update_cache + "
                        "custom_sdpa")
    p.add_argument("-X", "--xnnpack", action="store_true", help="delegate to XNNPACK")
    p.add_argument("-qmode", "--quantization_mode", choices=("8da4w", "int8", "4w"), default=None)
    p.add_argument("-G", "--group_size", type=int, default=128)
    p.add_argument("-E", "--embedding-quantize", dest="embedding_quantize", default=None,
                   metavar="BITS,GROUP", help="e.g. 8,0 or 4,32")
    p.add_argument("-d", "--dtype-override", dest="dtype_override", choices=DTYPES,
                   default="fp32",
                   help="the model's dtype: weights, activations and logits (the fused "
                        "attention operators and their KV caches stay float32, as upstream's)")
    p.add_argument("--kv_cache_dtype", choices=("fp32", "fp16"), default="fp32",
                   help="fp16: KV caches stored in float16, read back as float32 (half the "
                        "cache's memory and read bytes; needs --attention_ops torchlight and "
                        "-d fp32; a Torchlight addition)")
    p.add_argument("--max_seq_length", type=int, default=128,
                   help="most tokens per forward call, and the context without "
                        "--max_context_length")
    p.add_argument("--max_context_length", type=int, default=None,
                   help="positions in the KV cache (default: --max_seq_length)")
    p.add_argument("--metadata", default=None,
                   help='JSON of metadata methods, e.g. \'{"get_bos_id":1, "get_eos_ids":[2]}\'')
    p.add_argument("--output_name", default=None, help="the .pte to write")
    p.add_argument("--output-dir", dest="output_dir", type=Path, default=Path("."))
    p.add_argument("--tokenizer_path", type=Path, default=None,
                   help="recorded as get_tokenizer() (its file name; put it beside the .pte)")
    p.add_argument("--enable_dynamic_shape", action=argparse.BooleanOptionalAction, default=True,
                   help="T from 1 to max_seq_length (--no-enable_dynamic_shape: T = 1)")
    p.add_argument("--fuse-linears", dest="fuse_linears", action=argparse.BooleanOptionalAction,
                   default=False,
                   help="one linear for each block's wq/wk/wv and one for w1/w3 (a torchlight "
                        "extension, fuse_linears.py; default: upstream's separate linears)")
    p.add_argument("--generate_full_logits", action="store_true",
                   help="logits of every position, [1, T, vocab]")
    p.add_argument("--seed", type=int, default=0, help="of the random weights")
    p.add_argument("-v", "--verbose", action="store_true")
    return p


def build_model(args):
    """The eager model the program is exported from (quantized when asked)."""
    from torchlight.llm.checkpoints import config_from_meta_params, load_checkpoint
    from torchlight.llm.llama import Llama

    context = args.max_context_length or args.max_seq_length
    upstream = args.use_kv_cache and args.attention_ops == "llama"
    fields = dict(max_seq_len=context, upstream_layout=upstream,
                  use_custom_op=args.use_sdpa_with_kv_cache,
                  upstream_op="sdpa_with_kv_cache" if args.use_fused_sdpa_with_kv_cache
                  else "custom_sdpa")
    if args.checkpoint is not None:
        model = load_checkpoint(args.checkpoint, args.params, **fields)
    else:
        params = (json.loads(args.params.read_text()) if args.params is not None
                  else MODEL_PARAMS[args.model])
        torch.manual_seed(args.seed)
        model = Llama(config_from_meta_params(params, **fields)).eval()
    if args.dtype_override != "fp32":
        cast_model(model, DTYPES[args.dtype_override])
    if args.fuse_linears:  # after loading (the checkpoint names the separate linears)
        from torchlight.llm.fuse_linears import fuse_linears
        fuse_linears(model)
    if args.kv_cache_dtype == "fp16":
        from torchlight.llm.kv_cache import use_float16_kv_caches
        use_float16_kv_caches(model)
    if args.quantization_mode or args.embedding_quantize:
        from torchlight.llm.quantize import quantize_model
        skipped = quantize_model(model, args.quantization_mode, args.group_size,
                                 args.embedding_quantize)
        if skipped:
            print(f"left float (input width not a multiple of {args.group_size}): "
                  f"{', '.join(skipped)}", file=sys.stderr)
    return model


def cast_model(model, dtype: torch.dtype):
    """Casts `model` (a Llama) to `dtype` as upstream's export_llama -d does:
    every parameter and buffer, except that the KV caches of the fused
    attention operators stay float32 (those operators compute in float32;
    attention casts its q, k, v to them and the result back)."""
    model.to(dtype)
    for layer in model.layers:
        attention = layer.attention
        if attention.use_custom_op:
            cache = attention.kv_cache
            cache.k_cache = cache.k_cache.float()
            cache.v_cache = cache.v_cache.float()
    return model


def metadata_for(args, model) -> dict:
    from torchlight.llm.metadata import TOKENIZER, upstream_llm_metadata
    family = "llama3" if args.model.startswith("llama3") else "llama2"
    bos, eos = FAMILY_IDS.get(family, (1, [2]))
    vocab = model.config.vocab_size
    bos = bos if bos < vocab else -1
    eos = [i for i in eos if i < vocab]
    overrides = json.loads(args.metadata) if args.metadata else {}
    if not isinstance(overrides, dict):
        raise ValueError(f"--metadata must be a JSON object, got {args.metadata!r}")
    methods = upstream_llm_metadata(model, bos, eos, args.use_kv_cache,
                                    args.use_sdpa_with_kv_cache, args.enable_dynamic_shape,
                                    overrides)
    methods["get_max_seq_len"] = min(args.max_seq_length, model.max_seq_len)
    if args.tokenizer_path is not None:
        methods[TOKENIZER] = args.tokenizer_path.name
    return methods


def export(args) -> Path:
    import torchlight
    from torchlight.llm.export import export_llm

    if args.dtype_override != "fp32" and (args.quantization_mode or args.embedding_quantize):
        raise ValueError(f"-d {args.dtype_override} with -qmode / -E: the quantized linears and "
                         f"embeddings compute in float32; quantize an fp32 model")
    if args.use_sdpa_with_kv_cache and not args.use_kv_cache:
        raise ValueError("--use_sdpa_with_kv_cache needs -kv (a KV cache to attend over)")
    model = build_model(args)
    last_only = not args.generate_full_logits
    if args.enable_dynamic_shape:
        ep = export_llm(model, last_logits_only=last_only,
                        use_kv_cache=args.use_kv_cache)
    else:
        ep = _export_static(model, last_only, args.use_kv_cache)
    methods = metadata_for(args, model)
    partitioners = []
    if args.xnnpack:
        from torchlight.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
        partitioners.append(XnnpackPartitioner())
    edge = torchlight.to_edge_transform_and_lower(ep, partitioner=partitioners,
                                                  constant_methods=methods)
    program = edge.to_executorch(torchlight.ExecutorchBackendConfig())
    name = args.output_name or _default_name(args)
    out = Path(name) if Path(name).is_absolute() else args.output_dir / name
    out.parent.mkdir(parents=True, exist_ok=True)
    program.save(str(out))
    print(f"wrote {out} ({out.stat().st_size / 2**20:.1f} MiB)", file=sys.stderr)
    if args.verbose:
        print(f"operators: {', '.join(program.operators())}", file=sys.stderr)
    return out


def _export_static(model, last_only: bool, use_kv_cache: bool):
    """T = 1 for every call (upstream's --no-enable_dynamic_shape)."""
    from torchlight.llm.export import _drop_scalar_asserts
    model.eval()
    model.reset_cache()
    model.last_logits_only = last_only
    tokens = torch.zeros((1, 1), dtype=torch.long)
    if not use_kv_cache:
        raise ValueError("--no-enable_dynamic_shape needs -kv: without a cache every call "
                         "feeds the whole sequence")
    pos = torch.zeros((1,), dtype=torch.long)
    with torch.no_grad():
        ep = torch.export.export(model, (tokens, pos))
    return _drop_scalar_asserts(ep)


def _default_name(args) -> str:
    parts = [args.model if args.checkpoint is None else args.checkpoint.stem]
    if args.use_kv_cache:
        parts.append("kv")
    if args.use_sdpa_with_kv_cache:
        parts.append("sdpa")
    if args.xnnpack:
        parts.append("xnnpack")
    if args.quantization_mode:
        parts.append(args.quantization_mode)
    return "_".join(parts) + ".pte"


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        export(args)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
