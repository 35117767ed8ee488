"""Upstream ExecuTorch's LLM operators, `llama::*`, under their own names and
schemas, so programs that call them (upstream's export_llama, or ours with
upstream naming) trace, run in eager and run in the C++ runtime
(kernels/llm/op_llama_sdpa.cpp).

Layouts are upstream's, sequence before heads:

    llama::update_cache(Tensor value, Tensor(a!) cache, SymInt start_pos) -> Tensor
        value [B, S, H, D]; cache [B, max_S, H, D]; writes
        cache[:, start_pos : start_pos + S] = value. The result is a
        placeholder (upstream returns an unused one-element tensor).

    llama::custom_sdpa(Tensor query, Tensor key, Tensor value, SymInt start_pos,
                       Tensor? attn_mask=None, float drpout_p=0.0,
                       bool is_causal=False, float? scale=None) -> Tensor
        query [B, S, Hq, D]; key, value: the whole caches [B, max_S, Hkv, D]
        (already updated). Query row i sits at position start_pos + i and
        attends over cache positions 0 .. start_pos + i with is_causal,
        0 .. start_pos + S - 1 without. Result [B, S, Hq, D].

    llama::sdpa_with_kv_cache(Tensor query, Tensor key, Tensor value,
                              Tensor(a!) key_cache, Tensor(b!) value_cache,
                              SymInt start_pos, SymInt seq_len,
                              Tensor? attn_mask=None, float drpout_p=0.0,
                              bool is_causal=False, float? scale=None) -> Tensor
        update_cache of key and value at start_pos, then custom_sdpa.

Each also has its `.out` form (`*, Tensor(x!) out`), which programs call.
Grouped-query attention: query head h reads key/value head h // (Hq / Hkv).
Only attn_mask=None and drpout_p=0 are supported (the runner's use).

When upstream's own extension (executorch.extension.llm.custom_ops) already
defined the namespace in this process, its definitions are kept.
"""

from __future__ import annotations

import math
from typing import Optional

import torch

NAMESPACE = "llama"

SCHEMAS = {
    "update_cache": "(Tensor value, Tensor(a!) cache, SymInt start_pos) -> Tensor",
    "update_cache.out": ("(Tensor value, Tensor(a!) cache, SymInt start_pos, *, "
                         "Tensor(b!) out) -> Tensor(b!)"),
    "custom_sdpa": ("(Tensor query, Tensor key, Tensor value, SymInt start_pos, "
                    "Tensor? attn_mask=None, float drpout_p=0.0, bool is_causal=False, "
                    "float? scale=None) -> Tensor"),
    "custom_sdpa.out": ("(Tensor query, Tensor key, Tensor value, SymInt start_pos, "
                        "Tensor? attn_mask=None, float drpout_p=0.0, bool is_causal=False, "
                        "float? scale=None, *, Tensor(a!) out) -> Tensor(a!)"),
    "sdpa_with_kv_cache": ("(Tensor query, Tensor key, Tensor value, Tensor(a!) key_cache, "
                           "Tensor(b!) value_cache, SymInt start_pos, SymInt seq_len, "
                           "Tensor? attn_mask=None, float drpout_p=0.0, bool is_causal=False, "
                           "float? scale=None) -> Tensor"),
    "sdpa_with_kv_cache.out": ("(Tensor query, Tensor key, Tensor value, "
                               "Tensor(a!) key_cache, Tensor(b!) value_cache, SymInt start_pos, "
                               "SymInt seq_len, Tensor? attn_mask=None, float drpout_p=0.0, "
                               "bool is_causal=False, float? scale=None, *, Tensor(c!) out) "
                               "-> Tensor(c!)"),
}


def _check_supported(attn_mask, drpout_p, op: str) -> None:
    if attn_mask is not None:
        raise ValueError(f"llama::{op}: attn_mask is not supported (pass None; the causal "
                         f"mask comes from start_pos and is_causal)")
    if drpout_p != 0.0:
        raise ValueError(f"llama::{op}: drpout_p must be 0.0 (inference), got {drpout_p}")


def _check_cache(value: torch.Tensor, cache: torch.Tensor, start_pos: int, op: str) -> None:
    if value.dim() != 4 or cache.dim() != 4:
        raise ValueError(f"llama::{op}: value {list(value.shape)} and cache "
                         f"{list(cache.shape)} must both be [B, S, H, D]")
    b, s, h, d = value.shape
    if (cache.shape[0], cache.shape[2], cache.shape[3]) != (b, h, d):
        raise ValueError(f"llama::{op}: value {list(value.shape)} does not fit cache "
                         f"{list(cache.shape)} (B, H and D must agree)")
    if start_pos < 0 or start_pos + s > cache.shape[1]:
        raise ValueError(f"llama::{op}: positions {start_pos}..{start_pos + s - 1} are outside "
                         f"the cache's {cache.shape[1]}")


def attend(query: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor,
           start_pos: int, is_causal: bool, scale: Optional[float]) -> torch.Tensor:
    """The custom_sdpa computation in plain operators (see the module docstring)."""
    b, s, hq, d = query.shape
    hkv = key_cache.shape[2]
    if query.dim() != 4 or key_cache.dim() != 4 or hq % hkv != 0:
        raise ValueError(f"llama::custom_sdpa: query {list(query.shape)} and caches "
                         f"{list(key_cache.shape)} must be [B, S, Hq, D] and [B, max_S, Hkv, D] "
                         f"with Hq a multiple of Hkv")
    if start_pos < 0 or start_pos + s > key_cache.shape[1]:
        raise ValueError(f"llama::custom_sdpa: positions {start_pos}..{start_pos + s - 1} are "
                         f"outside the cache's {key_cache.shape[1]}")
    n_rep = hq // hkv
    used = start_pos + s
    k = key_cache[:, :used].transpose(1, 2).repeat_interleave(n_rep, dim=1)    # [B, Hq, used, D]
    v = value_cache[:, :used].transpose(1, 2).repeat_interleave(n_rep, dim=1)
    q = query.transpose(1, 2)                                                  # [B, Hq, S, D]
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    scores = torch.matmul(q, k.transpose(2, 3)) * scale                       # [B, Hq, S, used]
    if is_causal:
        rows = torch.arange(s).unsqueeze(1) + start_pos
        cols = torch.arange(used).unsqueeze(0)
        scores = scores.masked_fill(cols > rows, float("-inf"))
    out = torch.matmul(torch.softmax(scores, dim=-1), v)                       # [B, Hq, S, D]
    return out.transpose(1, 2).contiguous()


def _update_cache(value, cache, start_pos):
    _check_cache(value, cache, start_pos, "update_cache")
    cache[:, start_pos:start_pos + value.shape[1]] = value
    return torch.empty((1,), dtype=value.dtype)


def _update_cache_out(value, cache, start_pos, *, out):
    _update_cache(value, cache, start_pos)
    return out


def _custom_sdpa(query, key, value, start_pos, attn_mask=None, drpout_p=0.0, is_causal=False,
                 scale=None):
    _check_supported(attn_mask, drpout_p, "custom_sdpa")
    return attend(query, key, value, start_pos, is_causal, scale)


def _custom_sdpa_out(query, key, value, start_pos, attn_mask=None, drpout_p=0.0, is_causal=False,
                     scale=None, *, out):
    result = _custom_sdpa(query, key, value, start_pos, attn_mask, drpout_p, is_causal, scale)
    out.resize_(result.shape)
    return out.copy_(result)


def _sdpa_with_kv_cache(query, key, value, key_cache, value_cache, start_pos, seq_len,
                        attn_mask=None, drpout_p=0.0, is_causal=False, scale=None):
    _check_supported(attn_mask, drpout_p, "sdpa_with_kv_cache")
    if key.shape[1] != seq_len or query.shape[1] != seq_len:
        raise ValueError(f"llama::sdpa_with_kv_cache: seq_len {seq_len} differs from the "
                         f"query's {query.shape[1]} or key's {key.shape[1]} rows")
    _update_cache(key, key_cache, start_pos)
    _update_cache(value, value_cache, start_pos)
    return attend(query, key_cache, value_cache, start_pos, is_causal, scale)


def _sdpa_with_kv_cache_out(query, key, value, key_cache, value_cache, start_pos, seq_len,
                            attn_mask=None, drpout_p=0.0, is_causal=False, scale=None, *, out):
    result = _sdpa_with_kv_cache(query, key, value, key_cache, value_cache, start_pos, seq_len,
                                 attn_mask, drpout_p, is_causal, scale)
    out.resize_(result.shape)
    return out.copy_(result)


def _fake_update_cache(value, cache, start_pos):
    return value.new_empty((1,))


def _fake_sdpa(query, *args, **kwargs):
    return query.new_empty(query.shape)


def _fake_out(*args, out, **kwargs):
    return out


def _already_defined() -> bool:
    try:
        torch.ops.llama.custom_sdpa.default  # noqa: B018
        return True
    except (AttributeError, RuntimeError):
        return False


_IMPLS = {"update_cache": (_update_cache, _fake_update_cache),
          "update_cache.out": (_update_cache_out, _fake_out),
          "custom_sdpa": (_custom_sdpa, _fake_sdpa),
          "custom_sdpa.out": (_custom_sdpa_out, _fake_out),
          "sdpa_with_kv_cache": (_sdpa_with_kv_cache, _fake_sdpa),
          "sdpa_with_kv_cache.out": (_sdpa_with_kv_cache_out, _fake_out)}

if not _already_defined():
    _lib = torch.library.Library(NAMESPACE, "FRAGMENT")
    for _name, _schema in SCHEMAS.items():
        _lib.define(_name + _schema)
    for _name, (_eager, _fake) in _IMPLS.items():
        _lib.impl(_name, _eager, "CompositeExplicitAutograd")
        torch.library.register_fake(f"{NAMESPACE}::{_name}", _fake, lib=_lib)

update_cache = torch.ops.llama.update_cache.default
custom_sdpa = torch.ops.llama.custom_sdpa.default
sdpa_with_kv_cache = torch.ops.llama.sdpa_with_kv_cache.default
