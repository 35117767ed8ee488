"""The shape's programs in both attention layouts, for ab_compare.py.

    python3 bench/llm/export_attention_layouts.py [--shape stories15m]
        [--quant fp32,int8,8da4w] [--kv-cache-dtype fp32] [--new DIR] [--earlier DIR]

Exports with bench_llm.py's model and settings (same weights) into two
workdirs: --new (default build/bench-new) the default program, whose
float32 attention is one torchlight::rope_sdpa_with_kv_cache call on
[B, T, H, D] tensors, and --earlier (build/bench-earlier) with every
Attention.rope_in_attention = False: q, k, v transposed to [B, H, T, D]
(permute_copy), rope, sdpa_with_kv_cache, and the result transposed back,
the program of session 18 and before. Then, e.g.:

    python3 bench/llm/ab_compare.py --base build/release/bin/torchlight
        --workdir build/bench-new --base-workdir build/bench-earlier
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_llm  # noqa: E402
from torchlight.llm.llama import Attention  # noqa: E402


def _building(rope_in_attention: bool):
    build = bench_llm.build_model

    def build_model(shape: str):
        model = build(shape)
        for module in model.modules():
            if isinstance(module, Attention):
                module.rope_in_attention = rope_in_attention
        return model
    return build_model


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shape", default="stories15m", choices=("stories15m", "stories110m"))
    p.add_argument("--quant", default="fp32,int8,8da4w")
    p.add_argument("--kv-cache-dtype", choices=("fp32", "fp16"), default="fp32")
    p.add_argument("--new", type=Path, default=REPO / "build" / "bench-new")
    p.add_argument("--earlier", type=Path, default=REPO / "build" / "bench-earlier")
    args = p.parse_args()
    original = bench_llm.build_model
    try:
        for workdir, rope_in_attention in ((args.new, True), (args.earlier, False)):
            bench_llm.build_model = _building(rope_in_attention)
            workdir.mkdir(parents=True, exist_ok=True)
            for quant in args.quant.split(","):
                pte, _ = bench_llm.export_program(args.shape, quant, 32, workdir,
                                                  kv_cache_dtype=args.kv_cache_dtype)
                print(pte)
    finally:
        bench_llm.build_model = original


if __name__ == "__main__":
    main()
