"""PyTorch on the shapes of torchlight_sdpa_bench, for comparison.

Times, per call in microseconds, at 1 and 2 threads:
  sdpa      torch.nn.functional.scaled_dot_product_attention over the valid
            cache prefix (what an eager model does, without the cache write);
  eager_op  torchlight's own eager definition of sdpa_with_kv_cache
            (python/torchlight/llm/custom_ops.py: cache write + masked
            attention over the whole cache), the path a model exported
            without the fused kernel decomposes into.

    tools/toolchain/run_in_root.sh /work/main python3 bench/sdpa/torch_sdpa.py
"""

from __future__ import annotations

import os
import sys

import torch
import torch.nn.functional as F
from torch.utils import benchmark

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from torchlight.llm import custom_ops  # noqa: E402

HEADS, HEAD_DIM, CACHE_LEN = 12, 64, 1024
CASES = [("decode", 1, 128), ("decode", 1, 512), ("decode", 1, 1024), ("prefill", 128, 128)]


def time_us(fn, threads: int) -> float:
    timer = benchmark.Timer(stmt="fn()", globals={"fn": fn}, num_threads=threads)
    return timer.blocked_autorange(min_run_time=0.5).median * 1e6


def main() -> None:
    torch.manual_seed(0)
    print(f"torch {torch.__version__}; times in microseconds per call (median)")
    print(f"{'case':28} {'sdpa 1T':>10} {'sdpa 2T':>10} {'eager_op 1T':>12} {'eager_op 2T':>12}")
    for phase, rows, valid in CASES:
        query = torch.randn(1, HEADS, rows, HEAD_DIM)
        key = torch.randn(1, HEADS, rows, HEAD_DIM)
        value = torch.randn(1, HEADS, rows, HEAD_DIM)
        key_cache = torch.randn(1, HEADS, CACHE_LEN, HEAD_DIM)
        value_cache = torch.randn(1, HEADS, CACHE_LEN, HEAD_DIM)
        input_pos = torch.arange(valid - rows, valid)
        k_prefix, v_prefix = key_cache[:, :, :valid], value_cache[:, :, :valid]
        causal = rows > 1  # Prefill from position 0: the usual causal mask.

        def sdpa():
            return F.scaled_dot_product_attention(query, k_prefix, v_prefix, is_causal=causal)

        def eager_op():
            return custom_ops.sdpa_with_kv_cache_reference(query, key, value, key_cache,
                                                           value_cache, input_pos)

        with torch.inference_mode():
            times = [time_us(sdpa, 1), time_us(sdpa, 2), time_us(eager_op, 1), time_us(eager_op, 2)]
        name = f"{phase}/T={rows}/L={valid}"
        print(f"{name:28} {times[0]:10.1f} {times[1]:10.1f} {times[2]:12.1f} {times[3]:12.1f}")


if __name__ == "__main__":
    main()
