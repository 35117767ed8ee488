"""torchlight::sdpa_with_kv_cache: schema, semantics against a naive loop,
in-place cache updates, the out variant and the fake (meta) implementation."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from torchlight.llm import custom_ops


def test_schema_is_the_documented_one():
    schemas = {str(op._schema) for op in (custom_ops.sdpa_with_kv_cache,
                                          custom_ops.sdpa_with_kv_cache_out)}
    assert schemas == {"torchlight::" + custom_ops.SCHEMA, "torchlight::" + custom_ops.OUT_SCHEMA}
    assert str(custom_ops.sdpa_with_kv_cache._schema) == (
        "torchlight::sdpa_with_kv_cache(Tensor query, Tensor key, Tensor value, "
        "Tensor(a!) key_cache, Tensor(b!) value_cache, Tensor input_pos, float? scale=None) "
        "-> Tensor")


def _naive(query, key, value, key_cache, value_cache, input_pos, scale):
    """The documented semantics, one row and head at a time, in numpy."""
    q, k, v = query.numpy(), key.numpy(), value.numpy()
    kc, vc = key_cache.numpy().copy(), value_cache.numpy().copy()
    pos = input_pos.numpy()
    b, hq, t, d = q.shape
    hkv = kc.shape[1]
    for i in range(t):
        kc[:, :, pos[i]] = k[:, :, i]
        vc[:, :, pos[i]] = v[:, :, i]
    out = np.zeros_like(q)
    for bi in range(b):
        for h in range(hq):
            g = h // (hq // hkv)
            for i in range(t):
                n = pos[i] + 1
                s = np.array([scale * float(np.dot(q[bi, h, i], kc[bi, g, j])) for j in range(n)])
                w = np.exp(s - s.max())
                w /= w.sum()
                out[bi, h, i] = sum(w[j] * vc[bi, g, j] for j in range(n))
    return out, kc, vc


def _inputs(hq=4, hkv=2, t=3, s=8, d=5, start=2):
    g = torch.Generator().manual_seed(1)
    query = torch.randn(1, hq, t, d, generator=g)
    key = torch.randn(1, hkv, t, d, generator=g)
    value = torch.randn(1, hkv, t, d, generator=g)
    key_cache = torch.randn(1, hkv, s, d, generator=g)      # stale rows must not matter
    value_cache = torch.randn(1, hkv, s, d, generator=g)
    input_pos = torch.arange(start, start + t)
    return query, key, value, key_cache, value_cache, input_pos


@pytest.mark.parametrize("hq,hkv", [(4, 4), (4, 2), (6, 1)])
def test_matches_naive_loop_and_updates_caches_in_place(hq, hkv):
    args = _inputs(hq=hq, hkv=hkv)
    scale = 1 / math.sqrt(5)
    expected, kc, vc = _naive(*args, scale)
    key_cache, value_cache = args[3], args[4]
    out = custom_ops.sdpa_with_kv_cache(*args)
    np.testing.assert_allclose(out.numpy(), expected, atol=1e-5, rtol=1e-5)
    # Written rows 2..4 hold the new keys/values; the others are untouched.
    np.testing.assert_array_equal(key_cache.numpy(), kc)
    np.testing.assert_array_equal(value_cache.numpy(), vc)


def test_explicit_scale():
    args = _inputs()
    expected, _, _ = _naive(*[a.clone() for a in args], 0.25)
    out = custom_ops.sdpa_with_kv_cache(*args, 0.25)
    np.testing.assert_allclose(out.numpy(), expected, atol=1e-5, rtol=1e-5)


def test_out_variant_writes_out():
    args = _inputs()
    expected = custom_ops.sdpa_with_kv_cache(*[a.clone() for a in args])
    out = torch.empty(1, 4, 3, 5)
    result = custom_ops.sdpa_with_kv_cache_out(*args, out=out)
    assert result is out
    torch.testing.assert_close(out, expected, atol=0, rtol=0)


def test_fake_impl_gives_the_output_shape_without_computing():
    with FakeTensorMode():
        args = _inputs(hq=6, hkv=2, t=4, s=16, d=8)
        out = custom_ops.sdpa_with_kv_cache(*args)
        assert out.shape == (1, 6, 4, 8) and out.dtype == torch.float32


@pytest.mark.parametrize("change,message", [
    (lambda a: a.__setitem__(1, torch.zeros(1, 2, 2, 5)), "key has shape"),
    (lambda a: a.__setitem__(4, torch.zeros(1, 2, 7, 5)), "value_cache has shape"),
    (lambda a: a.__setitem__(5, torch.arange(2)), "input_pos has shape"),
    (lambda a: a.__setitem__(0, torch.zeros(4, 3, 5)), "query must be"),
])
def test_bad_shapes_name_the_argument(change, message):
    args = list(_inputs())
    change(args)
    with pytest.raises(Exception, match=message):
        custom_ops.sdpa_with_kv_cache(*args)


def test_query_heads_must_be_a_multiple_of_kv_heads():
    q, k, v, kc, vc, pos = _inputs(hq=3, hkv=2)
    with pytest.raises(Exception, match="not a multiple"):
        custom_ops.sdpa_with_kv_cache(q, k, v, kc, vc, pos)
