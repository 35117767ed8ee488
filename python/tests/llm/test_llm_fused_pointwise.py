"""The fused pointwise chains (passes/fuse_llm_chains.py, kernels/llm
op_rms_norm.cpp / op_silu.cpp / op_rope.cpp): an exported Llama lowers its
RMSNorm chains to torchlight::rms_norm, its x * sigmoid(x) to
torchlight::silu and its rotary embeddings to torchlight::rope, with no
rsqrt, sigmoid, select, sub or cat left; the runtime matches eager PyTorch; inexact patterns
stay decomposed; the pass can be turned off.

Tolerances: float32 against torch's own float32 chain, 1e-5 relative (plus
1e-6 absolute for results near 0). The vector e^x of silu is within 2-3 ulp
of libm's; RMSNorm sums squares in a different order than torch's mean.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from llm_helpers import MAX_SEQ, VOCAB, tiny_llama
import torchlight
from torchlight.kernels import fused_pointwise
from torchlight.llm import export_llm
from torchlight.llm.llama import apply_rope, rope_frequencies

FUSED = {"torchlight::rms_norm.out", "torchlight::silu.out", "torchlight::rope.out"}
CHAIN = {"aten::rsqrt.out", "aten::sigmoid.out", "aten::pow.Tensor_Scalar_out", "aten::mean.out",
         "aten::select_copy.int_out", "aten::sub.out", "aten::cat.out",
         "aten::unsqueeze_copy.out"}


def _program(module, inputs, fuse=True):
    ep = torch.export.export(module, inputs)
    return torchlight.to_edge(ep).to_executorch(
        torchlight.ExecutorchBackendConfig(check_kernels=False, fuse_llm_chains=fuse))


def _llama_program(model, fuse=True):
    return torchlight.to_edge(export_llm(model)).to_executorch(
        torchlight.ExecutorchBackendConfig(check_kernels=False, fuse_llm_chains=fuse))


class _RmsNorm(nn.Module):
    def __init__(self, dim, eps=1e-5, weight_first=False):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
        self.eps = eps
        self.weight_first = weight_first

    def forward(self, x):
        if self.weight_first:
            return self.weight * (torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * x)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class _Silu(nn.Module):
    def forward(self, x):
        return nn.functional.silu(x) + 0.0


class _Rope(nn.Module):
    def forward(self, x, cos, sin):
        return apply_rope(x, cos, sin)


def _run(runtime, prog, inputs):
    (out,) = runtime.load(prog.buffer).run("forward", list(inputs))
    return torch.as_tensor(out)


@pytest.mark.parametrize("rows", [1, 3, 5, 7, 129])
def test_rope_matches_torch(runtime, rows):
    torch.manual_seed(rows)
    x = torch.randn(1, 3, rows, 10) * 4
    cos, sin = rope_frequencies(10, 256)
    cos, sin = cos[100:100 + rows], sin[100:100 + rows]
    prog = _program(_Rope(), (x, cos, sin))
    ops = set(prog.operators())
    assert "torchlight::rope.out" in ops and "aten::cat.out" not in ops, ops
    torch.testing.assert_close(_run(runtime, prog, (x, cos, sin)), apply_rope(x, cos, sin),
                               rtol=1e-5, atol=1e-6)


def test_llama_program_calls_the_fused_operators_and_no_chain():
    # The earlier attention layout: its rotary embeddings are chains the pass
    # fuses (the default rotates inside rope_sdpa_with_kv_cache); the
    # separate block operators: its SwiGLU holds F.silu (the default calls
    # torchlight::swiglu, test_llm_block_ops.py).
    model = tiny_llama(use_custom_op=True, rope_in_attention=False, fuse_block_ops=False)
    ops = set(_llama_program(model).operators())
    assert FUSED <= ops, ops
    assert not ops & CHAIN, ops
    off = set(_llama_program(model, fuse=False).operators())
    assert not off & FUSED and "aten::rsqrt.out" in off and "aten::sigmoid.out" in off


def test_reference_ops_equal_the_chains():
    x = torch.randn(3, 5, 16)
    w = torch.randn(16)
    assert torch.equal(fused_pointwise.rms_norm(x, w, 1e-6),
                       x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w)
    assert torch.equal(fused_pointwise.silu(x), x * torch.sigmoid(x))
    cos, sin = torch.randn(5, 8), torch.randn(5, 8)
    assert torch.equal(fused_pointwise.rope(x.reshape(3, 5, 8, 2), cos, sin).reshape(3, 5, 16),
                       apply_rope(x.reshape(3, 1, 5, 16), cos, sin).reshape(3, 5, 16))


@pytest.mark.parametrize("rows", [1, 3, 5, 7, 129])
@pytest.mark.parametrize("weight_first", [False, True])
def test_rms_norm_matches_torch(runtime, rows, weight_first):
    torch.manual_seed(rows)
    module = _RmsNorm(288, weight_first=weight_first)
    x = torch.randn(1, rows, 288) * 3
    prog = _program(module, (x,))
    assert "torchlight::rms_norm.out" in prog.operators()
    with torch.no_grad():
        want = module(x)
    torch.testing.assert_close(_run(runtime, prog, (x,)), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("rows", [1, 3, 5, 7, 129])
def test_silu_matches_torch(runtime, rows):
    torch.manual_seed(rows)
    x = torch.randn(rows, 77) * 12
    prog = _program(_Silu(), (x,))
    assert "torchlight::silu.out" in prog.operators()
    assert "aten::sigmoid.out" not in prog.operators()
    torch.testing.assert_close(_run(runtime, prog, (x,)), x * torch.sigmoid(x),
                               rtol=1e-5, atol=1e-6)


def test_silu_special_values_match_torch(runtime):
    special = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 3.4e38, -3.4e38, 1e30,
               -1e30, 1e-40, -1e-40, 1e-45, 88.0, 89.0, -87.0, -87.5, -88.7, -89.0, -100.0,
               -103.0, -104.0, -110.0, 100.0, 16.0, -16.0, 1e-8, -1e-8]
    x = torch.tensor(special * 5, dtype=torch.float32)   # every value in several lanes
    x = x[torch.randperm(x.numel(), generator=torch.Generator().manual_seed(0))]
    prog = _program(_Silu(), (x,))
    got = _run(runtime, prog, (x,))
    want = x * torch.sigmoid(x)
    # torch's own sigmoid flushes e^x below about -88 to 0; the exact result
    # (float64) is a subnormal there, which the kernel keeps.
    exact = (x.double() * torch.sigmoid(x.double())).float()
    ok = torch.isclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True) | \
        torch.isclose(got, exact, rtol=1e-5, atol=0, equal_nan=True)
    assert bool(ok.all()), list(zip(x[~ok].tolist(), got[~ok].tolist(), want[~ok].tolist()))


def test_inexact_patterns_stay_decomposed():
    class NotRms(nn.Module):
        def forward(self, x, w):
            r = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)
            return x * r * w + r          # rsqrt used twice

    class MeanOverRows(nn.Module):
        def forward(self, x, w):
            return x * torch.rsqrt(x.pow(2).mean(0, keepdim=True) + 1e-5) * w

    class SigmoidOfAnother(nn.Module):
        def forward(self, x, y):
            return x * torch.sigmoid(y)

    class RopeWithAPlusSign(nn.Module):
        def forward(self, x, cos, sin):
            pairs = x.reshape(1, 2, 5, 4, 2)
            real, imag = pairs[..., 0], pairs[..., 1]
            return torch.stack((real * cos + imag * sin, real * sin + imag * cos), dim=-1)

    x, w = torch.randn(4, 8), torch.randn(8)
    for module, inputs in [(NotRms(), (x, w)), (MeanOverRows(), (x, w)),
                           (SigmoidOfAnother(), (x, torch.randn(4, 8))),
                           (RopeWithAPlusSign(), (torch.randn(1, 2, 5, 8), torch.randn(5, 4),
                                                  torch.randn(5, 4)))]:
        ops = set(_program(module, inputs).operators())
        assert not ops & FUSED, (type(module).__name__, ops)


def test_runtime_llama_matches_eager(runtime):
    model = tiny_llama(use_custom_op=True)
    module = runtime.load(_llama_program(model).buffer)
    tokens = torch.randint(0, VOCAB, (1, MAX_SEQ), generator=torch.Generator().manual_seed(1))
    model.reset_cache()
    with torch.no_grad():
        expected = model(tokens, torch.arange(MAX_SEQ))
    outs = []
    for a, b in [(0, 9), (9, 10), (10, 11), (11, MAX_SEQ)]:   # prefill, then decode steps
        (logits,) = module.run("forward", [tokens[:, a:b], torch.arange(a, b)])
        outs.append(torch.as_tensor(logits))
    torch.testing.assert_close(torch.cat(outs, dim=1), expected, rtol=1e-4, atol=1e-4)
