"""A static key/value cache held as mutable buffers, and the attention over it.

Each attention layer owns one KVCache. Its two buffers have a fixed shape for
the model's whole life, so an exported program plans them once and updates
them in place on every call (torch.export lists them as mutated buffers).
They are not persistent: checkpoints and state dicts never carry them.
"""

from __future__ import annotations

from typing import Optional

import torch
from torch import nn

from torchlight.llm import custom_ops


class KVCache(nn.Module):
    """k_cache, v_cache: [max_batch, n_kv_heads, max_seq_len, head_dim] float32."""

    def __init__(self, max_batch: int, n_kv_heads: int, max_seq_len: int, head_dim: int,
                 dtype: torch.dtype = torch.float32):
        super().__init__()
        shape = (max_batch, n_kv_heads, max_seq_len, head_dim)
        self.register_buffer("k_cache", torch.zeros(shape, dtype=dtype), persistent=False)
        self.register_buffer("v_cache", torch.zeros(shape, dtype=dtype), persistent=False)

    def reset(self) -> None:
        self.k_cache.zero_()
        self.v_cache.zero_()


def cached_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cache: KVCache,
                     input_pos: torch.Tensor, use_custom_op: bool,
                     scale: Optional[float] = None) -> torch.Tensor:
    """Writes this step's k, v [B, Hkv, T, D] at `input_pos` [T] into `cache`
    and attends causally with q [B, Hq, T, D]; returns [B, Hq, T, D].

    With `use_custom_op` this is one call of torchlight::sdpa_with_kv_cache;
    otherwise the same computation in plain operators (index_copy_ into the
    buffers, masked softmax attention). The custom operator computes in the
    cache's dtype (float32): other q, k, v are cast to it and the result back;
    float32 q, k, v with float16 caches (use_float16_kv_caches) go to it as
    they are."""
    half_cache = q.dtype == torch.float32 and cache.k_cache.dtype == torch.float16
    if use_custom_op and q.dtype != cache.k_cache.dtype and not half_cache:
        dtype = cache.k_cache.dtype
        return cached_attention(q.to(dtype), k.to(dtype), v.to(dtype), cache, input_pos,
                                use_custom_op, scale).to(q.dtype)
    if use_custom_op:
        return custom_ops.sdpa_with_kv_cache(q, k, v, cache.k_cache, cache.v_cache, input_pos,
                                             scale)
    return custom_ops.sdpa_with_kv_cache_reference(q, k, v, cache.k_cache, cache.v_cache,
                                                   input_pos, scale)


def rope_cached_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cos: torch.Tensor,
                          sin: torch.Tensor, cache: KVCache, input_pos: torch.Tensor,
                          scale: Optional[float] = None) -> torch.Tensor:
    """cached_attention with the custom operator on [B, T, H, D] q, k, v
    (before the rotary embedding, which cos, sin [T, D/2] apply):
    returns [B, T, Hq, D]. One call of torchlight::rope_sdpa_with_kv_cache,
    so the program holds no transposes around it. float32 q, k, v only
    (float32 or float16 caches)."""
    return custom_ops.rope_sdpa_with_kv_cache(q, k, v, cache.k_cache, cache.v_cache, input_pos,
                                              cos, sin, scale)


def use_float16_kv_caches(model: nn.Module) -> int:
    """Makes every KVCache of `model` float16 (the model itself stays float32)
    and returns how many. Attention then stores each new key/value row
    rounded to float16 and reads the cache widened back to float32: half the
    cache's memory and half the bytes a decode step reads from it (llama.cpp
    keeps its cache in float16 by default), at float16's rounding of keys and
    values (relative 2^-11). Raises ValueError if the model has no KVCache
    (upstream's layout keeps its own caches) or is not float32."""
    caches = [m for m in model.modules() if isinstance(m, KVCache)]
    if not caches:
        raise ValueError("float16 KV caches: the model has no torchlight KVCache (upstream's "
                         "cache layout and models without a cache keep float32)")
    for cache in caches:
        if cache.k_cache.dtype != torch.float32:
            raise ValueError(f"float16 KV caches: the caches are {cache.k_cache.dtype}; only a "
                             f"float32 model's caches can be made float16")
        cache.k_cache = cache.k_cache.to(torch.float16)
        cache.v_cache = cache.v_cache.to(torch.float16)
    return len(caches)
