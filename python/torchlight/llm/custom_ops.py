"""The fused attention-with-KV-cache operator, `torchlight::sdpa_with_kv_cache`.

Schema (the C++ kernel implements exactly this; `.out` is the form a .pte
program calls):

    torchlight::sdpa_with_kv_cache(
        Tensor query,            # [B, Hq, T, D]  float32
        Tensor key,              # [B, Hkv, T, D] float32, this step's keys
        Tensor value,            # [B, Hkv, T, D] float32, this step's values
        Tensor(a!) key_cache,    # [B, Hkv, S, D] float32 or float16, updated in place
        Tensor(b!) value_cache,  # [B, Hkv, S, D] the key cache's dtype, updated in place
        Tensor input_pos,        # [T] int64, absolute position of each row
        float? scale=None        # None means 1/sqrt(D)
    ) -> Tensor                  # [B, Hq, T, D] float32, contiguous

    torchlight::sdpa_with_kv_cache.out(<same arguments>, *, Tensor(c!) out)
        -> Tensor(c!)

Semantics, for every batch b, query head h and row i < T:
  1. key_cache[b, :, input_pos[i], :] = key[b, :, i, :]; the same for values.
     All rows are written before any attention is computed.
  2. g = h // (Hq / Hkv) is the key/value head of query head h (grouped-query
     attention; Hq must be a multiple of Hkv, Hq == Hkv is ordinary attention).
  3. out[b, h, i, :] = softmax_j(scale * query[b, h, i, :] . key_cache[b, g, j, :])
     weighted sum of value_cache[b, g, j, :], over the cache positions
     j = 0 .. input_pos[i] (causal: a row sees itself and earlier positions).

Float16 caches (`use_float16_kv_caches`, kv_cache.py) halve the bytes
attention reads per token: step 1 stores the rows rounded to float16 (to
nearest even), step 3 reads them widened back to float32; everything else
stays float32.

Preconditions the kernel may check and report: every input_pos value lies in
[0, S); T <= S. Cache rows beyond max(input_pos) are never read, so a kernel
may stop there. The models below pass input_pos = start .. start+T-1.

`torchlight::rope_sdpa_with_kv_cache` is the same on [B, T, H, D] tensors
(sequence before heads, the layout the q/k/v linears produce and the output
linear reads), with the rotary embedding of query and key first:

    torchlight::rope_sdpa_with_kv_cache(
        Tensor query,            # [B, T, Hq, D]  float32, before the rotation
        Tensor key,              # [B, T, Hkv, D] float32, before the rotation
        Tensor value,            # [B, T, Hkv, D] float32
        Tensor(a!) key_cache,    # [B, Hkv, S, D] float32 or float16, updated in place
        Tensor(b!) value_cache,  # [B, Hkv, S, D] the key cache's dtype
        Tensor input_pos,        # [T] int64
        Tensor cos,              # [T, D/2] float32, the angles of row t's positions
        Tensor sin,              # [T, D/2] float32
        float? scale=None
    ) -> Tensor                  # [B, T, Hq, D] float32, contiguous

  0. query and key rows are rotated by interleaved pairs (llama.apply_rope):
     (x[2p], x[2p+1]) -> (x0 cos[t, p] - x1 sin[t, p], x0 sin[t, p] + x1 cos[t, p]);
  1.-3. as above, with the rotated rows, each tensor read as its
     transpose(1, 2): out[b, t, h] is what sdpa_with_kv_cache writes at
     [b, h, t].
A Llama layer then runs linear, this, linear: no transposes (permute_copy)
and no separate rope calls in the program (llama.Attention).

The eager definition (`sdpa_with_kv_cache_reference`) is written with plain
tensor operations only, so the models' `use_custom_op=False` path calls it
directly and torch.export traces it into core ATen operators: the "plain
decomposition" a runtime without the fused kernel runs.
"""

from __future__ import annotations

import math
from typing import Optional

import torch

from torchlight.llm.upstream_attention import apply_rope_bthd

NAMESPACE = "torchlight"
OP_NAME = "sdpa_with_kv_cache"

SCHEMA = ("sdpa_with_kv_cache(Tensor query, Tensor key, Tensor value, Tensor(a!) key_cache, "
          "Tensor(b!) value_cache, Tensor input_pos, float? scale=None) -> Tensor")
OUT_SCHEMA = ("sdpa_with_kv_cache.out(Tensor query, Tensor key, Tensor value, "
              "Tensor(a!) key_cache, Tensor(b!) value_cache, Tensor input_pos, "
              "float? scale=None, *, Tensor(c!) out) -> Tensor(c!)")


def check_shapes(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                 key_cache: torch.Tensor, value_cache: torch.Tensor,
                 input_pos: torch.Tensor) -> None:
    """Raises ValueError naming the argument whose shape breaks the schema."""
    if query.dim() != 4:
        raise ValueError(f"sdpa_with_kv_cache: query must be [B, Hq, T, D], got {list(query.shape)}")
    b, hq, t, d = query.shape
    if key_cache.dim() != 4:
        raise ValueError(f"sdpa_with_kv_cache: key_cache must be [B, Hkv, S, D], "
                         f"got {list(key_cache.shape)}")
    hkv, s = key_cache.shape[1], key_cache.shape[2]
    expect = {"key": (key, (b, hkv, t, d)), "value": (value, (b, hkv, t, d)),
              "key_cache": (key_cache, (b, hkv, s, d)), "value_cache": (value_cache, (b, hkv, s, d)),
              "input_pos": (input_pos, (t,))}
    for name, (tensor, shape) in expect.items():
        if tuple(tensor.shape) != shape:
            raise ValueError(f"sdpa_with_kv_cache: {name} has shape {list(tensor.shape)}, "
                             f"expected {list(shape)}")
    if hq % hkv != 0:
        raise ValueError(f"sdpa_with_kv_cache: {hq} query heads is not a multiple of "
                         f"{hkv} key/value heads")


def attend(query: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor,
           input_pos: torch.Tensor, scale: Optional[float] = None) -> torch.Tensor:
    """Causal grouped-query attention of `query` rows over the whole cache.

    query [B, Hq, T, D]; caches [B, Hkv, S, D]; input_pos [T] -> [B, Hq, T, D].
    Positions j > input_pos[i] are masked, so rows of the cache not yet written
    do not matter. Query heads are grouped per key/value head with a reshape
    (no copy of the cache): the n_rep query heads of one group attend as
    n_rep * T rows.
    """
    b, hq, _, d = query.shape
    hkv, s = key_cache.shape[1], key_cache.shape[2]
    n_rep = hq // hkv
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    q = query.reshape(b, hkv, -1, d)  # -1 = n_rep * T
    scores = torch.matmul(q, key_cache.transpose(2, 3)) * scale   # [B, Hkv, n_rep*T, S]
    scores = scores.reshape(b, hkv, n_rep, -1, s)
    positions = torch.arange(s, device=query.device)
    visible = positions.unsqueeze(0) <= input_pos.unsqueeze(1)    # [T, S]
    scores = scores.masked_fill(visible.logical_not(), float("-inf"))
    probs = torch.softmax(scores, dim=-1).reshape(b, hkv, -1, s)
    out = torch.matmul(probs, value_cache)                        # [B, Hkv, n_rep*T, D]
    return out.reshape(b, hq, -1, d)


def sdpa_with_kv_cache_reference(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                                 key_cache: torch.Tensor, value_cache: torch.Tensor,
                                 input_pos: torch.Tensor,
                                 scale: Optional[float] = None) -> torch.Tensor:
    """The operator's definition in plain tensor operations (see the module
    docstring). Writes the new rows into the caches in place (rounded to the
    caches' dtype), then attends in the query's dtype."""
    key_cache.index_copy_(2, input_pos, key.to(key_cache.dtype))
    value_cache.index_copy_(2, input_pos, value.to(value_cache.dtype))
    return attend(query, key_cache.to(query.dtype), value_cache.to(query.dtype), input_pos, scale)


ROPE_OP_NAME = "rope_sdpa_with_kv_cache"
_ROPE_ARGS = ("Tensor query, Tensor key, Tensor value, Tensor(a!) key_cache, "
              "Tensor(b!) value_cache, Tensor input_pos, Tensor cos, Tensor sin, float? scale=None")
ROPE_SCHEMA = f"{ROPE_OP_NAME}({_ROPE_ARGS}) -> Tensor"
ROPE_OUT_SCHEMA = f"{ROPE_OP_NAME}.out({_ROPE_ARGS}, *, Tensor(c!) out) -> Tensor(c!)"


def check_rope_shapes(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                      key_cache: torch.Tensor, value_cache: torch.Tensor,
                      input_pos: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> None:
    """Raises ValueError naming the argument whose shape breaks the
    [B, T, H, D] schema."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.dim() != 4:
            raise ValueError(f"rope_sdpa_with_kv_cache: {name} must be [B, T, H, D], got "
                             f"{list(t.shape)}")
    if query.shape[3] % 2:
        raise ValueError(f"rope_sdpa_with_kv_cache: query has head size {query.shape[3]}, "
                         f"expected an even size (the rotary embedding turns pairs)")
    t, d = query.shape[1], query.shape[3]
    for name, table in (("cos", cos), ("sin", sin)):
        if tuple(table.shape) != (t, d // 2):
            raise ValueError(f"rope_sdpa_with_kv_cache: {name} has shape {list(table.shape)}, "
                             f"expected [T, D/2] = {[t, d // 2]}")
    check_shapes(query.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2), key_cache,
                 value_cache, input_pos)


def rope_sdpa_with_kv_cache_reference(query: torch.Tensor, key: torch.Tensor,
                                      value: torch.Tensor, key_cache: torch.Tensor,
                                      value_cache: torch.Tensor, input_pos: torch.Tensor,
                                      cos: torch.Tensor, sin: torch.Tensor,
                                      scale: Optional[float] = None) -> torch.Tensor:
    """rope_sdpa_with_kv_cache in plain tensor operations (module docstring)."""
    out = sdpa_with_kv_cache_reference(apply_rope_bthd(query, cos, sin).transpose(1, 2),
                                       apply_rope_bthd(key, cos, sin).transpose(1, 2),
                                       value.transpose(1, 2), key_cache, value_cache, input_pos,
                                       scale)
    return out.transpose(1, 2).contiguous()


_lib = torch.library.Library(NAMESPACE, "FRAGMENT")
_lib.define(SCHEMA)
_lib.define(OUT_SCHEMA)
_lib.define(ROPE_SCHEMA)
_lib.define(ROPE_OUT_SCHEMA)


def _eager(query, key, value, key_cache, value_cache, input_pos, scale=None):
    check_shapes(query, key, value, key_cache, value_cache, input_pos)
    return sdpa_with_kv_cache_reference(query, key, value, key_cache, value_cache, input_pos,
                                        scale)


def _eager_out(query, key, value, key_cache, value_cache, input_pos, scale=None, *, out):
    result = _eager(query, key, value, key_cache, value_cache, input_pos, scale)
    out.resize_(result.shape)
    out.copy_(result)
    return out


def _rope_eager(query, key, value, key_cache, value_cache, input_pos, cos, sin, scale=None):
    check_rope_shapes(query, key, value, key_cache, value_cache, input_pos, cos, sin)
    return rope_sdpa_with_kv_cache_reference(query, key, value, key_cache, value_cache,
                                             input_pos, cos, sin, scale)


def _rope_eager_out(query, key, value, key_cache, value_cache, input_pos, cos, sin, scale=None,
                    *, out):
    result = _rope_eager(query, key, value, key_cache, value_cache, input_pos, cos, sin, scale)
    out.resize_(result.shape)
    out.copy_(result)
    return out


_lib.impl(OP_NAME, _eager, "CompositeExplicitAutograd")
_lib.impl(OP_NAME + ".out", _eager_out, "CompositeExplicitAutograd")
_lib.impl(ROPE_OP_NAME, _rope_eager, "CompositeExplicitAutograd")
_lib.impl(ROPE_OP_NAME + ".out", _rope_eager_out, "CompositeExplicitAutograd")


@torch.library.register_fake(f"{NAMESPACE}::{OP_NAME}", lib=_lib)
def _fake(query, key, value, key_cache, value_cache, input_pos, scale=None):
    check_shapes(query, key, value, key_cache, value_cache, input_pos)
    # Contiguous, like the eager result, whatever the query's strides: the
    # exporter turns reshapes of the result into views on this promise.
    return query.new_empty(query.shape)


@torch.library.register_fake(f"{NAMESPACE}::{OP_NAME}.out", lib=_lib)
def _fake_out(query, key, value, key_cache, value_cache, input_pos, scale=None, *, out):
    check_shapes(query, key, value, key_cache, value_cache, input_pos)
    return out


@torch.library.register_fake(f"{NAMESPACE}::{ROPE_OP_NAME}", lib=_lib)
def _rope_fake(query, key, value, key_cache, value_cache, input_pos, cos, sin, scale=None):
    check_rope_shapes(query, key, value, key_cache, value_cache, input_pos, cos, sin)
    return query.new_empty(query.shape)  # contiguous, like the eager result


@torch.library.register_fake(f"{NAMESPACE}::{ROPE_OP_NAME}.out", lib=_lib)
def _rope_fake_out(query, key, value, key_cache, value_cache, input_pos, cos, sin, scale=None,
                   *, out):
    check_rope_shapes(query, key, value, key_cache, value_cache, input_pos, cos, sin)
    return out


sdpa_with_kv_cache = torch.ops.torchlight.sdpa_with_kv_cache.default
sdpa_with_kv_cache_out = torch.ops.torchlight.sdpa_with_kv_cache.out
rope_sdpa_with_kv_cache = torch.ops.torchlight.rope_sdpa_with_kv_cache.default
rope_sdpa_with_kv_cache_out = torch.ops.torchlight.rope_sdpa_with_kv_cache.out
