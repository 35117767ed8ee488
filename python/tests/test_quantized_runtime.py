"""Quantized programs without a delegate, run by the C++ runtime against
PyTorch running the same quantized graph (kernels/quantized).

pt2e (XNNPACKQuantizer) models and LLMs with torchlight.llm.quantize's
modes. Tolerances: the runtime's quantize may round a value sitting on a .5
boundary differently from torch by one step, so outputs are compared within
one output quantization step (static pt2e) or 1e-4 relative (weight-only
LLM logits, where both dequantize the same int8 weights exactly). A test
whose program needs an operator the runtime build has no kernel for yet is
skipped, naming the operators.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest
import torch

import torchlight
from torchlight.llm import export_llm, generate
from torchlight.llm.quantize import quantize_model

sys.path.insert(0, str(Path(__file__).resolve().parent / "llm"))
from llm_helpers import MAX_SEQ, VOCAB, tiny_gpt, tiny_llama  # noqa: E402
from test_quantized_export import ConvLinear, _quantize  # noqa: E402


def _program(ep):
    return torchlight.to_edge(ep).to_executorch(
        torchlight.ExecutorchBackendConfig(check_kernels=False))


def _require_kernels(prog, kernels):
    missing = sorted(set(prog.operators()) - kernels - {"aten::sym_size.int"})
    if missing:
        pytest.skip(f"runtime build has no kernel for {', '.join(missing)}")


def _output_step(gm):
    """The scale of the dequantize producing the graph's output."""
    output = next(n for n in gm.graph.nodes if n.op == "output")
    dq = output.args[0][0]
    assert dq.target is torch.ops.quantized_decomposed.dequantize_per_tensor.default, dq.target
    return float(dq.args[1])


@pytest.mark.parametrize("per_channel", [True, False], ids=["per_channel", "per_tensor"])
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_pt2e_program_matches_quantized_graph(runtime, kernels, per_channel, dynamic):
    x = (torch.randn(1, 3, 8, 8),)
    q = _quantize(ConvLinear(), x, per_channel, dynamic)
    torch._dynamo.reset()
    prog = _program(torch.export.export(q, x))
    _require_kernels(prog, kernels)
    module = runtime.load(prog.buffer)
    # Float arithmetic in a different order (the conv, the linears) can put
    # a value on the other side of a rounding boundary: one step at each of
    # the two linear outputs the final add sums, so two output steps.
    # Dynamic quantization leaves the output float: a 1% band of its range.
    for _ in range(3):
        xi = torch.randn(1, 3, 8, 8)
        (got,) = module.run("forward", [xi])
        expected = q(xi)
        tol = 2 * _output_step(q) + 1e-6 if not dynamic else \
            0.01 * float(expected.abs().max())
        torch.testing.assert_close(torch.as_tensor(got), expected, rtol=0, atol=tol)


class TwoLinears(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(40, 24)
        self.fc2 = torch.nn.Linear(24, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


@pytest.mark.parametrize("rows", [1, 3, 7, 33])
@pytest.mark.parametrize("per_channel", [True, False], ids=["per_channel", "per_tensor"])
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_pt2e_linear_runs_as_one_int8_product(runtime, kernels, rows, per_channel, dynamic):
    """Without a delegate, each pt2e linear becomes torchlight::linear_qs8 (int8
    activations x int8 weights summed in int32); no float linear is left.
    Rows 1..33 cover every remainder of the kernel's 4-row blocks. Tolerances
    as test_pt2e_program_matches_quantized_graph: static outputs within one
    output step per linear (the float rounding of the fused scale can move a
    value across a rounding boundary), dynamic (float) outputs within 1% of
    their range (a requantized hidden value may move one step)."""
    x = (torch.randn(rows, 40),)
    q = _quantize(TwoLinears(), x, per_channel, dynamic)
    torch._dynamo.reset()
    prog = _program(torch.export.export(q, x))
    _require_kernels(prog, kernels)
    used = set(prog.operators())
    fused = "torchlight::linear_qs8.Tensor_out" if dynamic else "torchlight::linear_qs8.out"
    assert fused in used, used
    assert not {"aten::linear.out", "aten::mm.out", "aten::addmm.out",
                "quantized_decomposed::dequantize_per_channel.out"} & used, used
    module = runtime.load(prog.buffer)
    for _ in range(3):
        xi = torch.randn(rows, 40)
        (got,) = module.run("forward", [xi])
        expected = q(xi)
        tol = 2 * _output_step(q) + 1e-6 if not dynamic else \
            0.01 * float(expected.abs().max())
        torch.testing.assert_close(torch.as_tensor(got), expected, rtol=0, atol=tol)


LLM_CASES = [("int8", None), ("4w", None), ("8da4w", None), ("int8", "8,0"), ("8da4w", "4,32")]


@pytest.mark.parametrize("make", [tiny_gpt, tiny_llama], ids=["gpt", "llama"])
@pytest.mark.parametrize("qmode,embedding", LLM_CASES,
                         ids=[f"{m}-E{e}" for m, e in LLM_CASES])
def test_quantized_llm_prefill_decode_and_greedy(runtime, kernels, make, qmode, embedding):
    model = make(use_custom_op=False)
    quantize_model(model, qmode, 32, embedding)
    prog = _program(export_llm(model))
    _require_kernels(prog, kernels)
    module = runtime.load(prog.buffer)
    tokens = torch.randint(0, VOCAB, (1, MAX_SEQ))
    with torch.no_grad():
        expected = model(tokens)
    outs = []
    for a, b in [(0, 9), (9, 10), (10, 11), (11, MAX_SEQ)]:
        (logits,) = module.run("forward", [tokens[:, a:b], torch.arange(a, b)])
        outs.append(torch.as_tensor(logits))
    # Weight-only modes dequantize the same int8 values: float rounding only.
    # 8da4w also quantizes activations per token, where a value on a rounding
    # boundary may land one step apart: allow a small fraction of the range.
    got = torch.cat(outs, dim=1)
    if qmode == "8da4w":
        span = float(expected.max() - expected.min())
        assert (got - expected).abs().max() <= 0.02 * span
    else:
        torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4)

    # Greedy decode from the program equals generate() on the quantized model.
    runtime_module = runtime.load(prog.buffer)
    prompt = [7, 1, 30, 2]
    want = generate(model, prompt, max_new_tokens=8)
    (logits,) = runtime_module.run("forward", [torch.tensor([prompt]), torch.arange(4)])
    got_tokens = []
    for pos in range(4, 12):
        got_tokens.append(int(torch.as_tensor(logits)[0, -1].argmax()))
        (logits,) = runtime_module.run("forward", [torch.tensor([[got_tokens[-1]]]),
                                                   torch.tensor([pos])])
    assert got_tokens == want
