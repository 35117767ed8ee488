"""Upstream's release-0.5 MLP program and our XNNPACK-delegated programs run
in our runtime (XnnpackBackend on Debian's XNNPACK) against PyTorch eager:
float32 within 1e-4 of the output's magnitude; quantized programs within a few output quantization
steps of PyTorch's q/dq graph."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import test_xnnpack_export as ex
from torchlight.backends.xnnpack import preprocess
from helpers import FIXTURES
from test_xnnpack_quant import (ConvNet, Relu6Net, _output_step, _quantize, assert_near_qdq_graph,
                                mobilenet_v2_with_live_activations)


def _run(runtime, model, inputs, quantized=False):
    model = model.eval()
    edge, prog = ex._lower(model, inputs)
    module = runtime.load(prog.buffer)
    assert "XnnpackBackend" in module.method_meta()["backends"]
    actual = module.run("forward", list(inputs))
    with torch.no_grad():
        expected = model(*inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(actual) == len(expected)
    return prog, actual, expected


def _check(runtime, model, inputs):
    prog, actual, expected = _run(runtime, model, inputs)
    for a, e in zip(actual, expected):
        if e.dtype.is_floating_point:
            ex._close(a, e)
        else:
            assert torch.equal(a, e)
    return prog


@pytest.mark.parametrize("name", sorted(ex.UNARY))
def test_unary(runtime, name):
    _check(runtime, ex.Unary(ex.UNARY[name][0]), (torch.randn(2, 3, 5) * 3,))


@pytest.mark.parametrize("name", sorted(ex.BINARY))
def test_binary(runtime, name):
    _check(runtime, ex.Binary(ex.BINARY[name][0]), (torch.randn(3, 4, 5), torch.randn(3, 4, 5)))


@pytest.mark.parametrize("name", sorted(ex.CONVS))
def test_convolution(runtime, name):
    kwargs, _ = ex.CONVS[name]
    _check(runtime, ex.Conv(**kwargs), (torch.randn(2, kwargs["cin"], 9, 11),))


@pytest.mark.parametrize("model,shapes", [
    (ex.Pools(), [(2, 5, 10, 12)]), (ex.Shapes(), [(2, 3, 4), (2, 3, 4)]),
    (ex.NhwcChain(), [(1, 3, 6, 7)]), (ex.Head(), [(2, 3, 8, 8)]), (ex.Mlp(), [(2, 16)]),
], ids=["pools", "shapes", "nhwc_chain", "head", "mlp"])
def test_models(runtime, model, shapes):
    _check(runtime, model, tuple(torch.randn(s) for s in shapes))


def test_qint8_relu6_clamp_matches_the_float_round_trip(runtime, monkeypatch):
    # dq -> hardtanh -> q with one scale is lowered as a qint8 clamp (which
    # XNNPACK folds into the convolution's output range); the same program
    # with convert -> float clamp -> convert must give the same bytes here.
    torch.manual_seed(0)
    x = (torch.randn(2, 3, 13, 7) * 3,)
    quantized = _quantize(Relu6Net(), x)
    _, fused = ex._lower(quantized, x)
    monkeypatch.setattr(preprocess._Serializer, "requantize_same", lambda self, node: None)
    _, round_trip = ex._lower(quantized, x)
    assert len(fused.buffer) < len(round_trip.buffer)
    (a,) = runtime.load(fused.buffer).run("forward", list(x))
    (b,) = runtime.load(round_trip.buffer).run("forward", list(x))
    assert torch.equal(a, b)
    with torch.no_grad():
        expected = quantized(*x)
    step = _output_step(quantized)
    error = float((a - expected).abs().max())
    assert error <= 3 * step, f"error {error} is more than 3 output steps ({step})"


@pytest.mark.parametrize("rows", [1, 3, 5, 7])
def test_linear_rows(runtime, rows):
    _check(runtime, torch.nn.Linear(37, 19), (torch.randn(rows, 37),))


def test_mixed_program(runtime):
    prog = _check(runtime, ex.Mixed(), (torch.randn(2, 3, 8, 8),))
    kinds = [type(i.instr_args).__name__
             for i in prog.program.execution_plan[0].chains[0].instructions]
    assert kinds.count("DelegateCall") == 2 and "KernelCall" in kinds


def test_repeated_runs_and_passthrough(runtime):
    class M(torch.nn.Module):
        def forward(self, x):
            y = torch.relu(x)
            return y, y.clone(), y
    model = M()
    _, prog = ex._lower(model, (torch.randn(3, 4),))
    module = runtime.load(prog.buffer)
    for _ in range(3):
        x = torch.randn(3, 4)
        outputs = module.run("forward", [x])
        for out in outputs:
            assert torch.equal(out, torch.relu(x))


def test_static_int8_conv_net(runtime):
    torch.manual_seed(0)
    x = (torch.randn(1, 3, 10, 10),)
    quantized = _quantize(ConvNet(), x)
    _, prog = ex._lower(quantized, x)
    assert prog.operators() == []
    (actual,) = runtime.load(prog.buffer).run("forward", list(x))
    with torch.no_grad():
        expected = quantized(*x)
    step = _output_step(quantized)
    error = float((actual - expected).abs().max())
    assert error <= 3 * step, f"error {error} is more than 3 output steps ({step})"


@pytest.mark.parametrize("rows", [1, 3, 5, 7])
def test_dynamic_int8_linear(runtime, rows):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(40, 24), torch.nn.ReLU(),
                                torch.nn.Linear(24, 6))
    x = (torch.randn(rows, 40),)
    quantized = _quantize(model, x, dynamic=True)
    _, prog = ex._lower(quantized, x)
    assert prog.operators() == []
    (actual,) = runtime.load(prog.buffer).run("forward", list(x))
    with torch.no_grad():
        expected = model(*x)
    assert float((actual - expected).abs().max()) <= 0.05 * float(expected.abs().max())


@pytest.mark.parametrize("name", ["mobilenet_v2", "resnet18"])
def test_torchvision_models(runtime, name):
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None)
    _check(runtime, model, (torch.randn(1, 3, 224, 224),))


def test_xnnpack_backend_is_registered(runtime):
    assert "XnnpackBackend" in runtime.registered_backends()


def test_upstream_mlp_matches_eager_output(runtime):
    x = torch.from_numpy(np.fromfile(FIXTURES / "mlp_xnnpack.input0.bin", dtype="<f4").reshape(2, 16))
    expected = torch.from_numpy(np.fromfile(FIXTURES / "mlp_xnnpack.output0.bin",
                                            dtype="<f4").reshape(2, 4))
    module = runtime.load(FIXTURES / "mlp_xnnpack.pte")
    assert module.method_meta("forward")["backends"] == ["XnnpackBackend"]
    for _ in range(2):  # The second call reuses the runtime built at load.
        (out,) = module.forward(x)
        assert out.shape == (2, 4)
        scale = expected.abs().max().item()
        assert (out - expected).abs().max().item() <= 1e-4 * scale


def _inverted_residual(cin, cout, stride, expand):
    """MobileNetV2's block (1x1 expand + ReLU6, 3x3 depthwise + ReLU6, 1x1
    projection, BatchNorm after each), with random BatchNorm statistics."""
    hidden = cin * expand
    layers = []
    if expand != 1:
        layers += [torch.nn.Conv2d(cin, hidden, 1, bias=False), torch.nn.BatchNorm2d(hidden),
                   torch.nn.ReLU6()]
    layers += [torch.nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
               torch.nn.BatchNorm2d(hidden), torch.nn.ReLU6(),
               torch.nn.Conv2d(hidden, cout, 1, bias=False), torch.nn.BatchNorm2d(cout)]
    for m in layers:
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.3, 0.3)
    return torch.nn.Sequential(*layers)


class _InvertedResiduals(torch.nn.Module):
    """Three blocks: 5 -> 40 -> 24 with stride 2, 24 -> 144 -> 24 with the
    residual add, and 24 -> 40 without an expand layer."""

    def __init__(self):
        super().__init__()
        self.a = _inverted_residual(5, 24, 2, 8)
        self.b = _inverted_residual(24, 24, 1, 6)
        self.c = _inverted_residual(24, 40, 1, 1)

    def forward(self, x):
        y = self.a(x)
        y = y + self.b(y)
        return self.c(y)


@pytest.mark.parametrize("isa", [None, "avx2", "generic"])
def test_inverted_residual_blocks_fused_match_eager(runtime, monkeypatch, tmp_path, isa):
    # The blocks run as fused stages (their events name the kernel) within
    # 1e-5 of eager, odd sizes and batch 2; TORCHLIGHT_FUSED_ISA picks the
    # AVX2 or generic kernel instead of the CPU's best.
    torch.manual_seed(0)
    model = _InvertedResiduals().eval()
    x = torch.randn(2, 5, 13, 11) * 2
    _, prog = ex._lower(model, (x,))
    if isa is not None:
        monkeypatch.setenv("TORCHLIGHT_FUSED_ISA", isa)
    trace = tmp_path / "trace.etdp"
    module = runtime.load(prog.buffer, etdump_path=trace)
    (actual,) = module.run("forward", [x])
    with torch.no_grad():
        expected = model(x)
    ex._close(actual, expected, rel=1e-5)
    del module  # Writes the trace.
    assert trace.read_bytes().count(b"Inverted residual (NHWC, F32) fused") >= 3
    if isa is not None:
        assert f"fused {isa} #".encode() in trace.read_bytes()
    monkeypatch.setenv("TORCHLIGHT_XNNPACK_FUSE", "0")
    (unfused,) = runtime.load(prog.buffer).run("forward", [x])
    ex._close(unfused, expected, rel=1e-5)


def _cpu_has(flag):
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and f" {flag}" in line for line in f)
    except OSError:
        return False


def test_mobilenet_v2_int8_depthwise_stages_match_xnnpack_alone(runtime, monkeypatch, tmp_path):
    # The int8 program as the delegate runs it (its 17 depthwise layers on
    # depthwise_qs8 wherever the CPU has AVX2, the rest on XNNPACK) gives the
    # same bytes as XNNPACK alone, and stays near PyTorch's
    # q/dq graph (assert_near_qdq_graph says how near).
    model = mobilenet_v2_with_live_activations()
    x = (torch.randn(1, 3, 224, 224),)
    quantized = _quantize(model, x)
    _, prog = ex._lower(quantized, x)
    assert prog.operators() == []
    trace = tmp_path / "trace.etdp"
    module = runtime.load(prog.buffer, etdump_path=trace)
    (split,) = module.run("forward", list(x))
    del module  # Writes the trace.
    if _cpu_has("avx2"):
        assert trace.read_bytes().count(b"depthwise_qs8 #") >= 17
    monkeypatch.setenv("TORCHLIGHT_XNNPACK_CONV", "xnnpack")
    (alone,) = runtime.load(prog.buffer).run("forward", list(x))
    assert torch.equal(split, alone)
    with torch.no_grad():
        expected = quantized(*x)
    assert_near_qdq_graph(split, expected, _output_step(quantized))
