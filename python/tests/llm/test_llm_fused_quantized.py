"""The fused quantized linears (passes/fuse_quantized_linear.py,
kernels/quantized op_linear_8da4w.cpp / op_linear_int8.cpp / op_linear_4w.cpp):
a tiny Llama quantized 8da4w, int8 or 4w lowers to torchlight::linear_8da4w /
linear_int8 / linear_4w with no weight dequantization left, the runtime's logits match the eager
quantized model, and greedy tokens are equal. Patterns that are not exact
stay decomposed, and the pass can be turned off.

Tolerances: int8 differs from the decomposed graph by float rounding only
(the scale is applied after the sum), 4w by summation order only: 1e-4
absolute and relative. 8da4w
quantizes activations exactly as the decomposed graph does and sums
integers exactly, but upstream float rounding may move an activation across
a rounding boundary: 1e-3 of the logits' range.
"""

from __future__ import annotations

import copy

import pytest
import torch

from llm_helpers import MAX_SEQ, VOCAB, tiny_llama
import torchlight
from torchlight.kernels import fused_quantized
from torchlight.llm import export_llm, generate
from torchlight.llm.quantize import pack_embedding_weight, quantize_model

FUSED = {"8da4w": "torchlight::linear_8da4w.out", "int8": "torchlight::linear_int8.out",
         "4w": "torchlight::linear_4w.out"}
WEIGHT_DEQUANT = {"quantized_decomposed::dequantize_per_channel_group.out",
                  "quantized_decomposed::dequantize_per_channel.out"}


def _model(qmode):
    # hidden_dim 64: every linear's width is a multiple of the group (32).
    model = tiny_llama(use_custom_op=False, hidden_dim=64)
    assert quantize_model(model, qmode, 32) == []
    return model


def _program(model, fuse=True):
    return torchlight.to_edge(export_llm(model)).to_executorch(
        torchlight.ExecutorchBackendConfig(check_kernels=False, fuse_quantized_linears=fuse))


@pytest.mark.parametrize("qmode", ["8da4w", "int8", "4w"])
def test_program_calls_the_fused_linear_and_no_weight_dequantize(qmode):
    model = _model(qmode)
    n_linears = sum(1 for m in model.modules() if hasattr(m, "scales") and
                    hasattr(m, "in_features"))
    prog = _program(model)
    ops = set(prog.operators())
    assert FUSED[qmode] in ops
    assert not ops & WEIGHT_DEQUANT, ops
    assert "quantized_decomposed::choose_qparams_per_token_asymmetric.out" not in ops
    calls = [n for n in prog.method_graph().graph.nodes
             if n.op == "call_function" and str(n.target) == FUSED[qmode].replace("::", ".")]
    assert len(calls) == n_linears
    # Off: the decomposed kernels run instead.
    off = set(_program(model, fuse=False).operators())
    assert FUSED[qmode] not in off and off & WEIGHT_DEQUANT


@pytest.mark.parametrize("qmode", ["8da4w", "4w"])
def test_int4_weights_are_packed_at_export(qmode):
    model = _model(qmode)
    method = _program(model).method_graph()
    weights = [t for n, t in method.constants.items() if n.name.endswith("_packed_int4")]
    assert weights and all(t.dtype == torch.uint8 for t in weights)
    # Only the packed copies remain: no int8 [N, K] weight is left in the program.
    assert not [t for t in method.constants.values() if t.dtype == torch.int8]


def test_inexact_patterns_stay_decomposed():
    model = _model("8da4w")
    model.layers[0].attention.wq.zeros.fill_(1.0)          # asymmetric weights
    model.layers[0].attention.wk.weight[0, 0] = 9          # not a 4-bit value
    prog = _program(model)
    graph = prog.method_graph().graph
    fused = [n for n in graph.nodes if "linear_8da4w" in str(n.target)]
    decomposed = [n for n in graph.nodes if "dequantize_per_channel_group" in str(n.target)]
    assert len(decomposed) == 2 and len(fused) >= 1


def test_4w_program_is_smaller_than_int8():
    """4 bits a weight plus a float32 scale a group of 32: the 4w program
    drops at least 0.3 byte a linear weight against int8's one byte (0.375
    less padding)."""
    sizes = {qmode: len(_program(_model(qmode)).buffer) for qmode in ("int8", "4w")}
    weights = sum(m.in_features * m.out_features for m in _model("4w").modules()
                  if hasattr(m, "scales") and hasattr(m, "in_features"))
    assert sizes["int8"] - sizes["4w"] >= 0.3 * weights, (sizes, weights)


@pytest.mark.parametrize("qmode", ["8da4w", "int8", "4w"])
def test_reference_op_equals_the_decomposed_linear(qmode):
    model = _model(qmode)
    linear = model.layers[0].feed_forward.w1
    x = torch.randn(3, 5, linear.in_features)
    with torch.no_grad():
        want = linear(x)
        if qmode == "8da4w":
            got = torch.ops.torchlight.linear_8da4w(x, pack_embedding_weight(linear.weight, 4),
                                                    linear.scales, 32, linear.bias)
        elif qmode == "4w":
            got = fused_quantized.linear_4w(x, pack_embedding_weight(linear.weight, 4),
                                            linear.scales, 32, linear.bias)
        else:
            got = fused_quantized.linear_int8(x, linear.weight, linear.scales, linear.bias)
    assert torch.equal(got, want)


@pytest.mark.parametrize("qmode", ["8da4w", "int8", "4w"])
def test_runtime_matches_eager_quantized_model(runtime, qmode):
    model = _model(qmode)
    prog = _program(model)
    module = runtime.load(prog.buffer)
    tokens = torch.randint(0, VOCAB, (1, MAX_SEQ))
    model.reset_cache()
    with torch.no_grad():
        expected = model(tokens, torch.arange(MAX_SEQ))
    model.reset_cache()
    outs = []
    for a, b in [(0, 9), (9, 10), (10, 11), (11, MAX_SEQ)]:   # prefill, then decode steps
        (logits,) = module.run("forward", [tokens[:, a:b], torch.arange(a, b)])
        outs.append(torch.as_tensor(logits))
    got = torch.cat(outs, dim=1)
    if qmode in ("int8", "4w"):
        torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4)
    else:
        span = float(expected.max() - expected.min())
        assert float((got - expected).abs().max()) <= 1e-3 * span

    prompt = [7, 1, 30, 2]
    want = generate(copy.deepcopy(model), prompt, max_new_tokens=8)
    module = runtime.load(prog.buffer)
    (logits,) = module.run("forward", [torch.tensor([prompt]), torch.arange(4)])
    got_tokens = []
    for pos in range(4, 12):
        got_tokens.append(int(torch.as_tensor(logits)[0, -1].argmax()))
        (logits,) = module.run("forward", [torch.tensor([[got_tokens[-1]]]), torch.tensor([pos])])
    assert got_tokens == want
