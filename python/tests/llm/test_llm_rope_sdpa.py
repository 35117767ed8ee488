"""torchlight::rope_sdpa_with_kv_cache: a Llama's attention on the [B, T, H, D]
q, k, v its linears produce, rotary embedding included, so our programs hold
no transposes (permute_copy) and no rope calls around attention.

References: the operator's eager definition is the earlier path's
arithmetic on the same tensors (llama.apply_rope, then sdpa_with_kv_cache on
the transposes), compared exactly; the programs against the earlier layout's
program (Attention.rope_in_attention = False: transposes, torchlight::rope,
torchlight::sdpa_with_kv_cache), whose logits they equal bit for bit (the
kernel rotates with rope's arithmetic and attends with the same loops), and
against eager within the existing parity tolerances (fp32 1e-5, int8 1e-4,
8da4w 1e-3 of the logits' range; float16 caches 1e-3 of their scale). The earlier layout's programs (what older
.pte files hold) still run.
"""

from __future__ import annotations

import copy
from collections import Counter

import pytest
import torch

import torchlight
from llm_helpers import (MAX_SEQ, VOCAB, assert_near_eager, eager_steps, run_program_steps,
                         tiny_llama)
from torchlight.llm import custom_ops, export_llm
from torchlight.llm.kv_cache import use_float16_kv_caches
from torchlight.llm.llama import Attention, apply_rope
from torchlight.passes.out_variants import ALIAS_OF

QMODES = [None, "int8", "8da4w"]
STEPS = [(0, 9), (9, 10), (10, 11), (11, MAX_SEQ)]  # a prefill, then decode steps
HEADS = {"gqa": dict(n_heads=4, n_kv_heads=2), "mha": dict(n_heads=4, n_kv_heads=4)}


def _model(heads="gqa", **kw):
    return tiny_llama(hidden_dim=64, **HEADS[heads], **kw)


def _earlier_layout(model):
    for module in model.modules():
        if isinstance(module, Attention):
            module.rope_in_attention = False
    return model


def _program(model, qmode=None, fuse=False, kv16=False):
    if kv16:
        use_float16_kv_caches(model)
    ep = export_llm(model, qmode=qmode, group_size=32, fuse_linears=fuse)
    return torchlight.to_edge(ep).to_executorch(
        torchlight.ExecutorchBackendConfig(check_kernels=False))


def _op_counts(program) -> Counter:
    graph = program.method_graph().graph
    return Counter(str(n.target) for n in graph.nodes if n.op == "call_function")


def _run(module, tokens):
    return run_program_steps(module, tokens, STEPS)


def _eager(model, tokens):
    return eager_steps(model, tokens, STEPS)


def _tokens():
    return torch.randint(0, VOCAB, (1, MAX_SEQ), generator=torch.Generator().manual_seed(5))


# --- the operator's eager definition ------------------------------------------------------


@pytest.mark.parametrize("hkv", [1, 2, 4])
@pytest.mark.parametrize("cache_dtype", [torch.float32, torch.float16])
def test_operator_is_rope_then_sdpa_on_the_transposes(hkv, cache_dtype):
    g = torch.Generator().manual_seed(hkv)
    b, t, hq, d, s = 1, 5, 4, 6, 12
    q, k, v = (torch.randn(b, t, h, d, generator=g) for h in (hq, hkv, hkv))
    cos, sin = torch.randn(t, d // 2, generator=g), torch.randn(t, d // 2, generator=g)
    pos = torch.arange(3, 3 + t)
    caches = [torch.randn(b, hkv, s, d, generator=g).to(cache_dtype) for _ in range(2)]
    before = [c.clone() for c in caches]
    got = custom_ops.rope_sdpa_with_kv_cache(q, k, v, *caches, pos, cos, sin)
    # The earlier path: [B, H, T, D] transposes, apply_rope, sdpa_with_kv_cache.
    qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
    want = custom_ops.sdpa_with_kv_cache(apply_rope(qt, cos, sin), apply_rope(kt, cos, sin), vt,
                                         *before, pos).transpose(1, 2)
    assert got.is_contiguous() and got.shape == (b, t, hq, d)
    assert torch.equal(got, want)
    assert all(torch.equal(a, c) for a, c in zip(caches, before))


def test_bad_shapes_are_named():
    q, k, v = torch.zeros(1, 2, 4, 6), torch.zeros(1, 2, 2, 6), torch.zeros(1, 2, 2, 6)
    caches = torch.zeros(1, 2, 8, 6), torch.zeros(1, 2, 8, 6)
    pos, table = torch.arange(2), torch.zeros(2, 3)
    with pytest.raises(ValueError, match=r"sin has shape \[2, 2\], expected \[T, D/2\]"):
        custom_ops.rope_sdpa_with_kv_cache(q, k, v, *caches, pos, table, torch.zeros(2, 2))
    with pytest.raises(ValueError, match="head size 5, expected an even size"):
        custom_ops.rope_sdpa_with_kv_cache(q[..., :5], k[..., :5], v[..., :5], *caches, pos,
                                           table, table)
    with pytest.raises(ValueError, match="key has shape"):  # [B, Hkv, T, D]: the wrong layout
        custom_ops.rope_sdpa_with_kv_cache(q, torch.zeros(1, 2, 3, 6), v, *caches, pos, table,
                                           table)


# --- the programs -------------------------------------------------------------------------


@pytest.mark.parametrize("fuse", [False, True], ids=["separate", "fused"])
@pytest.mark.parametrize("qmode", QMODES, ids=lambda q: q or "fp32")
def test_program_has_no_transposes_or_rope_calls(qmode, fuse):
    model = _model()
    program = _program(model, qmode, fuse)
    counts = _op_counts(program)
    layers = model.config.n_layers
    assert counts["torchlight.rope_sdpa_with_kv_cache.out"] == layers
    for gone in ("aten.permute_copy.out", "torchlight.rope.out", "aten.clone.out",
                 "torchlight.sdpa_with_kv_cache.out"):
        assert gone not in counts, (gone, counts)
    # Every view left is an alias of its base (resized at run time), not a copy.
    views = [n for n in program.method_graph().graph.nodes
             if n.op == "call_function" and str(n.target) == "aten.view_copy.out"]
    assert views and all(n.kwargs["out"].meta.get(ALIAS_OF) is not None for n in views)
    # The earlier layout's program, for contrast: two transposes a layer at least.
    earlier = _op_counts(_program(_earlier_layout(_model()), qmode, fuse))
    assert earlier["aten.permute_copy.out"] >= 2 * layers
    assert earlier["torchlight.rope.out"] == 2 * layers


@pytest.mark.parametrize("kv16", [False, True], ids=["fp32_cache", "fp16_cache"])
@pytest.mark.parametrize("heads", sorted(HEADS))
@pytest.mark.parametrize("qmode", QMODES, ids=lambda q: q or "fp32")
def test_program_equals_the_earlier_layouts_program_and_eager(runtime, qmode, heads, kv16):
    model = _model(heads)
    earlier = _earlier_layout(copy.deepcopy(model))
    tokens = _tokens()
    got = _run(runtime.load(_program(model, qmode, kv16=kv16).buffer), tokens)
    want = _run(runtime.load(_program(earlier, qmode, kv16=kv16).buffer), tokens)
    assert torch.equal(got, want), float((got - want).abs().max())
    # export_llm quantized the models in place: their eager outputs.
    assert_near_eager(got, _eager(model, tokens), qmode, kv16)
    assert_near_eager(want, _eager(earlier, tokens), qmode, kv16)


def test_fused_linears_program_equals_the_earlier_layouts(runtime):
    model = _model("gqa")
    earlier = _earlier_layout(copy.deepcopy(model))
    tokens = _tokens()
    got = _run(runtime.load(_program(model, "8da4w", fuse=True).buffer), tokens)
    want = _run(runtime.load(_program(earlier, "8da4w", fuse=True).buffer), tokens)
    assert torch.equal(got, want), float((got - want).abs().max())


def test_plain_and_fp16_models_keep_the_earlier_path():
    # use_custom_op=False: the plain decomposition; a float16 model: casts
    # around sdpa_with_kv_cache. Neither calls the new operator.
    plain = _op_counts(_program(_model(use_custom_op=False)))
    assert "torchlight.rope_sdpa_with_kv_cache.out" not in plain
    half = _model().to(torch.float16)
    half_counts = Counter(str(n.target) for n in export_llm(half).graph.nodes
                          if n.op == "call_function")
    assert "torchlight.rope_sdpa_with_kv_cache.default" not in half_counts
    assert "torchlight.sdpa_with_kv_cache.default" in half_counts
