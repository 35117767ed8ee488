"""torchlight::add_rms_norm and torchlight::swiglu (llm/block_ops.py,
kernels/llm/op_add_rms_norm.cpp, op_swiglu.cpp): our layout's Llama runs
each residual add with the RMSNorm after it as one call, and SwiGLU's
silu(w1 x) * w3 x as one call, so a block holds 3 instructions fewer.

References: the operators' eager definitions equal the module arithmetic
they replace exactly (llama.RMSNorm, F.silu(gate) * up); the programs equal
bit for bit the programs exported with fuse_block_ops=False (separate add,
rms_norm, silu and mul: the earlier program, which old .pte files hold and
which still runs), at fp32, int8 and 8da4w, float32 and float16 caches,
separate and fused linears; and eager within the parity tolerances the
other program tests use (fp32 1e-5, int8 1e-4, 8da4w 1e-3 of the logits'
range). Upstream's layout is left as it was.
"""

from __future__ import annotations

import copy
from collections import Counter

import pytest
import torch
from torch.nn import functional as F

import torchlight
from llm_helpers import (MAX_SEQ, VOCAB, assert_near_eager, eager_steps, run_program_steps,
                         tiny_llama)
from torchlight.llm import block_ops, export_llm
from torchlight.llm.kv_cache import use_float16_kv_caches
from torchlight.llm.llama import RMSNorm

QMODES = [None, "int8", "8da4w"]
STEPS = [(0, 9), (9, 10), (10, 11), (11, MAX_SEQ)]  # a prefill, then decode steps
FUSED = ("torchlight::add_rms_norm.out", "torchlight::swiglu.out")
REPLACED = ("aten::add.out", "aten::mul.out", "torchlight::silu.out", "torchlight::rms_norm.out")


def _model(n_layers=2, **kw):
    return tiny_llama(hidden_dim=64, n_layers=n_layers, **kw)


def _program(model, qmode=None, fuse_linears=False, kv16=False):
    if kv16:
        use_float16_kv_caches(model)
    ep = export_llm(model, qmode=qmode, group_size=32, fuse_linears=fuse_linears)
    return torchlight.to_edge(ep).to_executorch(
        torchlight.ExecutorchBackendConfig(check_kernels=False))


def _op_counts(program) -> Counter:
    """The emitted method's kernel calls by operator (what execute runs)."""
    plan = program.executorch_program.execution_plan[0]
    names = [plan.operators[i.instr_args.op_index] for chain in plan.chains
             for i in chain.instructions if hasattr(i.instr_args, "op_index")]
    return Counter(f"{op.name}.{op.overload}" for op in names)


def _unfused(model):
    model.config.fuse_block_ops = False
    return model


def _tokens():
    return torch.randint(0, VOCAB, (1, MAX_SEQ), generator=torch.Generator().manual_seed(7))


def _eager(model, tokens):
    return eager_steps(model, tokens, STEPS)


# --- the operators' eager definitions -----------------------------------------------------


@pytest.mark.parametrize("shape", [(8,), (3, 8), (1, 5, 288), (2, 3, 4, 16)])
def test_add_rms_norm_is_the_add_then_llamas_rmsnorm(shape):
    g = torch.Generator().manual_seed(len(shape))
    x, h = torch.randn(shape, generator=g) * 3, torch.randn(shape, generator=g)
    norm = RMSNorm(shape[-1], 1e-5)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5, generator=g)
        total, normed = block_ops.add_rms_norm(x, h, norm.weight, norm.eps)
        assert torch.equal(total, x + h)
        assert torch.equal(normed, norm(x + h))


@pytest.mark.parametrize("shape", [(7,), (3, 64), (1, 5, 768)])
def test_swiglu_is_silu_times_up_of_tensors_or_halves(shape):
    g = torch.Generator().manual_seed(len(shape))
    gate, up = torch.randn(shape, generator=g) * 6, torch.randn(shape, generator=g)
    assert torch.equal(block_ops.swiglu(gate, up), F.silu(gate) * up)
    packed = torch.cat([gate, up], dim=-1)  # a fused w13's [..., 2H]
    halves = block_ops.swiglu(packed)
    assert halves.shape == gate.shape and torch.equal(halves, F.silu(gate) * up)


def test_bad_operands_are_named():
    x, w = torch.zeros(2, 8), torch.zeros(8)
    with pytest.raises(ValueError, match=r"residual must have input's shape \[2, 8\]"):
        block_ops.add_rms_norm(x, torch.zeros(1, 8), w, 1e-5)
    with pytest.raises(ValueError, match="weight must be \\[D\\]"):
        block_ops.add_rms_norm(x, x, torch.zeros(7), 1e-5)
    with pytest.raises(ValueError, match="must be float32"):
        block_ops.add_rms_norm(x.double(), x.double(), w.double(), 1e-5)
    with pytest.raises(ValueError, match=r"up must have gate's shape"):
        block_ops.swiglu(x, torch.zeros(2, 4))
    with pytest.raises(ValueError, match=r"without up, gate must be \[..., 2H\]"):
        block_ops.swiglu(torch.zeros(2, 7))


# --- the programs -------------------------------------------------------------------------


@pytest.mark.parametrize("fuse_linears", [False, True], ids=["separate", "fused"])
@pytest.mark.parametrize("qmode", QMODES, ids=lambda q: q or "fp32")
def test_each_block_runs_three_operators_fewer(qmode, fuse_linears):
    counts = {n: _op_counts(_program(_model(n), qmode, fuse_linears)) for n in (2, 3)}
    before = {n: _op_counts(_program(_unfused(_model(n)), qmode, fuse_linears)) for n in (2, 3)}
    per_layer = counts[3] - counts[2]
    per_layer_before = before[3] - before[2]
    # Per block: its two norms are add_rms_norm calls (the first block's
    # attention_norm has no add before it: the embedding), SwiGLU one swiglu.
    assert per_layer["torchlight::add_rms_norm.out"] == 2
    assert per_layer["torchlight::swiglu.out"] == 1
    for gone in REPLACED:
        assert per_layer[gone] == 0, (gone, per_layer)
    assert per_layer_before["aten::add.out"] == 2 and per_layer_before["aten::mul.out"] == 1
    assert per_layer_before["torchlight::rms_norm.out"] == 2
    assert per_layer_before["torchlight::silu.out"] == 1
    # A fused w13's halves: their two slices are gone too (wqkv's three stay).
    slices = 2 if fuse_linears else 0
    slice_op = "aten::slice_copy.Tensor_out"
    assert per_layer_before[slice_op] - per_layer[slice_op] == slices
    assert sum(per_layer.values()) == sum(per_layer_before.values()) - 3 - slices
    # The whole program: the first block's attention_norm, the final norm and
    # the last block's residual add (before the slice to the last position).
    layers = 3
    assert counts[3]["torchlight::add_rms_norm.out"] == 2 * layers - 1
    assert counts[3]["torchlight::swiglu.out"] == layers
    assert counts[3]["torchlight::rms_norm.out"] == 2 and counts[3]["aten::add.out"] == 1
    assert "aten::mul.out" not in counts[3] and "torchlight::silu.out" not in counts[3]


@pytest.mark.parametrize("kv16", [False, True], ids=["fp32_cache", "fp16_cache"])
@pytest.mark.parametrize("fuse_linears", [False, True], ids=["separate", "fused"])
@pytest.mark.parametrize("qmode", QMODES, ids=lambda q: q or "fp32")
def test_program_equals_the_unfused_program_and_eager(runtime, qmode, fuse_linears, kv16):
    model = _model()
    earlier = _unfused(copy.deepcopy(model))
    tokens = _tokens()
    new = _program(model, qmode, fuse_linears, kv16)
    old = _program(earlier, qmode, fuse_linears, kv16)
    assert set(FUSED) <= set(_op_counts(new)) and not set(FUSED) & set(_op_counts(old))
    got = run_program_steps(runtime.load(new.buffer), tokens, STEPS)
    want = run_program_steps(runtime.load(old.buffer), tokens, STEPS)
    assert torch.equal(got, want), float((got - want).abs().max())
    # export_llm quantized the models in place: their eager outputs.
    eager = _eager(model, tokens)
    assert_near_eager(got, eager, qmode, kv16)
    assert torch.equal(eager, _eager(earlier, tokens))


@pytest.mark.parametrize("op", ["custom_sdpa", "sdpa_with_kv_cache"])
def test_upstream_layout_is_left_as_it_was(op):
    model = _model(upstream_layout=True, upstream_op=op)
    counts = _op_counts(_program(model))
    assert not set(FUSED) & set(counts)
    assert counts == _op_counts(_program(_unfused(_model(upstream_layout=True, upstream_op=op))))


def test_other_models_keep_the_separate_operators():
    # The plain decomposition (no custom operators) and a float16 model.
    plain = _op_counts(_program(_model(use_custom_op=False)))
    assert not set(FUSED) & set(plain)
    half = _model().to(torch.float16)
    half_counts = Counter(str(n.target) for n in export_llm(half).graph.nodes
                          if n.op == "call_function")
    assert not {"torchlight.add_rms_norm.default", "torchlight.swiglu.default"} & set(half_counts)
