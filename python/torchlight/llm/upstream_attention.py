"""Attention in upstream ExecuTorch's program layout: the start position as
input_pos [1], tensors [B, T, H, D] (sequence before heads), caches
[B, max_seq_len, Hkv, D], and the llama:: operators (llama_ops.py).

Three ways to attend, as upstream's export_llama offers them:
  "custom_sdpa"         llama::update_cache (keys, values) then llama::custom_sdpa
                        (upstream's -kv --use_sdpa_with_kv_cache today)
  "sdpa_with_kv_cache"  the fused llama::sdpa_with_kv_cache (upstream's earlier form)
  "plain"               index_copy_ into the caches and a masked softmax over the
                        whole cache, in core ATen operators (upstream's -kv alone)
"""

from __future__ import annotations

import torch
from torch import nn

from torchlight.llm import llama_ops

UPSTREAM_OPS = ("custom_sdpa", "sdpa_with_kv_cache", "plain")


class UpstreamKVCache(nn.Module):
    """k_cache, v_cache: [max_batch, max_seq_len, n_kv_heads, head_dim] float32."""

    def __init__(self, max_batch: int, max_seq_len: int, n_kv_heads: int, head_dim: int):
        super().__init__()
        shape = (max_batch, max_seq_len, n_kv_heads, head_dim)
        self.register_buffer("k_cache", torch.zeros(shape), persistent=False)
        self.register_buffer("v_cache", torch.zeros(shape), persistent=False)

    def reset(self) -> None:
        self.k_cache.zero_()
        self.v_cache.zero_()


def upstream_start_pos(input_pos: torch.Tensor, max_seq_len: int):
    """input_pos [1] -> its value as an int (a size symbol under export,
    bounded by the context so slices of the rotary tables stay in range)."""
    if input_pos.dim() != 1 or input_pos.shape[0] != 1:
        raise ValueError(f"upstream layout: input_pos must be [1] (the start position), got "
                         f"{list(input_pos.shape)}")
    start = input_pos[0].item()
    torch._check_is_size(start)
    torch._check(start < max_seq_len)
    return start


def apply_rope_bthd(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x [B, T, H, D] with cos, sin [T, D/2]: rotates each pair (x[2i], x[2i+1])."""
    b, _, h, d = x.shape
    pairs = x.reshape(b, -1, h, d // 2, 2)
    real, imag = pairs[..., 0], pairs[..., 1]
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)  # [T, 1, D/2] over the heads
    out_real = real * cos - imag * sin
    out_imag = real * sin + imag * cos
    return torch.stack((out_real, out_imag), dim=-1).reshape(b, -1, h, d)


def _plain(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cache: UpstreamKVCache,
           start_pos) -> torch.Tensor:
    t = q.shape[1]
    positions = torch.arange(start_pos, start_pos + t)
    cache.k_cache.index_copy_(1, positions, k)
    cache.v_cache.index_copy_(1, positions, v)
    hq, hkv = q.shape[2], k.shape[2]
    n_rep = hq // hkv
    keys = cache.k_cache.transpose(1, 2).repeat_interleave(n_rep, dim=1)     # [B, Hq, S, D]
    values = cache.v_cache.transpose(1, 2).repeat_interleave(n_rep, dim=1)
    scores = torch.matmul(q.transpose(1, 2), keys.transpose(2, 3)) / (q.shape[-1] ** 0.5)
    cols = torch.arange(cache.k_cache.shape[1])
    scores = scores.masked_fill(cols.unsqueeze(0) > positions.unsqueeze(1), float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), values).transpose(1, 2)


def upstream_cached_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                              cache: UpstreamKVCache, start_pos, op: str) -> torch.Tensor:
    """q [B, T, Hq, D], k, v [B, T, Hkv, D] at positions start_pos.. -> [B, T, Hq, D].

    The llama:: operators compute in the caches' dtype (float32): an fp16 or
    bf16 model's q, k, v are cast to it and the result back, as upstream's
    SDPACustom does (export_llama -d fp16 keeps these caches float32)."""
    if op != "plain" and q.dtype != cache.k_cache.dtype:
        return upstream_cached_attention(q.to(cache.k_cache.dtype), k.to(cache.k_cache.dtype),
                                         v.to(cache.k_cache.dtype), cache, start_pos,
                                         op).to(q.dtype)
    if op == "custom_sdpa":
        llama_ops.update_cache(k, cache.k_cache, start_pos)
        llama_ops.update_cache(v, cache.v_cache, start_pos)
        return llama_ops.custom_sdpa(q, cache.k_cache, cache.v_cache, start_pos, None, 0.0, True)
    if op == "sdpa_with_kv_cache":
        return llama_ops.sdpa_with_kv_cache(q, k, v, cache.k_cache, cache.v_cache, start_pos,
                                            q.shape[1], None, 0.0, True)
    if op == "plain":
        return _plain(q, k, v, cache, start_pos)
    raise ValueError(f"upstream attention: unknown op {op!r}; expected one of {UPSTREAM_OPS}")
