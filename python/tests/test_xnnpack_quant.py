"""XNNPACK export of PyTorch's pt2e quantized graphs (XNNPACKQuantizer in
torch.ao.quantization.quantizer.xnnpack_quantizer): static per-tensor and
per-channel int8, and dynamic (per-row int8 activations, int8 per-channel
weights) linears. The q/dq patterns are consumed into quantized XNNPACK
nodes, not left as portable operators.

The payloads are computed by the spec-derived reader
(torchlight.backends.xnnpack.reference) and compared with the quantized
graph run eagerly (PyTorch's own q/dq reference): within a few output
quantization steps.
"""

from __future__ import annotations

import pytest
import torch
from torch.ao.quantization.quantize_pt2e import convert_pt2e, prepare_pt2e
from torch.ao.quantization.quantizer.xnnpack_quantizer import (
    XNNPACKQuantizer, get_symmetric_quantization_config)

import torchlight
from torchlight.backends.xnnpack import XnnpackPartitioner, payload, reference
from torchlight.pte import pte_file, schema

from test_xnnpack_export import _CheckDelegates, _delegates, _kind_names


def _quantize(model, inputs, per_channel=True, dynamic=False):
    torch._dynamo.reset()
    m = torch.export.export_for_training(model.eval(), inputs).module()
    quantizer = XNNPACKQuantizer().set_global(
        get_symmetric_quantization_config(is_per_channel=per_channel, is_dynamic=dynamic))
    m = prepare_pt2e(m, quantizer)
    for _ in range(4):
        m(*(torch.randn_like(x) for x in inputs))
    m(*inputs)
    return convert_pt2e(m)


def _export(quantized, inputs):
    torch._dynamo.reset()
    ep = torch.export.export(quantized, inputs)
    edge = torchlight.to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
    return edge, edge.to_executorch()


def _datatypes(p):
    found = set()
    for xvalue in p.graph.xvalues:
        body = xvalue.xvalueUnion
        found.add(getattr(body, "tensorValue", body).datatype)
    return found


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.dw = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        y = self.dw(y) + y
        return self.fc(y.mean(dim=(2, 3), keepdim=True).flatten(1))


def _output_step(quantized):
    """The scale of the last quantize in the graph (the output's step)."""
    qs = [n for n in quantized.graph.nodes if "quantize_per_tensor" in str(n.target)
          and "dequantize" not in str(n.target)]
    return float(qs[-1].args[1])


@pytest.mark.parametrize("per_channel", [True, False])
def test_static_conv_net(per_channel):
    torch.manual_seed(0)
    x = (torch.randn(1, 3, 10, 10),)
    quantized = _quantize(ConvNet(), x, per_channel=per_channel)
    edge, prog = _export(quantized, x)
    assert prog.operators() == [], "q/dq or compute left to portable kernels"
    ((p, nargs),) = _delegates(prog)
    reference.check(p, nargs)
    names = _kind_names(p)
    assert names.count("XNNConv2d") == 1 and names.count("XNNDepthwiseConv2d") == 1
    assert names.count("XNNFullyConnected") == 1
    kinds = set(_datatypes(p))
    assert reference.QINT8 in kinds and (reference.QINT32 in kinds or reference.QCINT32 in kinds)
    if per_channel:
        assert {reference.QCINT8, reference.QCINT32} <= kinds
    # The quantized convolutions read and write qint8 values.
    conv = next(n.xnodeUnion for n in p.graph.xnodes
                if reference._kinds()[n.xnodeUnionType] == "XNNConv2d")
    for value in (conv.input1Id, conv.outputId):
        body = p.graph.xvalues[value].xvalueUnion
        assert body.tensorValue.datatype == reference.QINT8
    step = _output_step(quantized)
    with torch.no_grad():
        expected = quantized(*x)
    (actual,) = reference.run(p, list(x))
    error = float((actual.reshape(expected.shape) - expected).abs().max())
    assert error <= 3 * step, f"error {error} is more than 3 output steps ({step})"


class Relu6Net(torch.nn.Module):
    """MobileNetV2's block shape, with torchvision's in-place ReLU6: pt2e
    gives that hardtanh_ its input's scale and zero point, so
    dq -> hardtanh -> q clamps qint8 values."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.dw = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.project = torch.nn.Conv2d(8, 16, 1)
        self.relu6 = torch.nn.ReLU6(inplace=True)

    def forward(self, x):
        return self.project(self.relu6(self.dw(self.relu6(self.conv(x)))))


def test_relu6_between_quantized_convolutions_is_a_qint8_clamp():
    torch.manual_seed(0)
    x = (torch.randn(1, 3, 9, 11),)
    quantized = _quantize(Relu6Net(), x)
    _, prog = _export(quantized, x)
    assert prog.operators() == []
    ((p, nargs),) = _delegates(prog)
    reference.check(p, nargs)
    names = _kind_names(p)
    # Only the graph input's and output's converts: no float round trip per relu6.
    assert names.count("XNNConvert") == 2 and names.count("XNNClamp") == 2
    for xnode in p.graph.xnodes:
        if reference._kinds()[xnode.xnodeUnionType] != "XNNClamp":
            continue
        clamp = xnode.xnodeUnion
        assert (xnode.outputMinMax.outputMin, xnode.outputMinMax.outputMax) == (0.0, 6.0)
        bodies = [p.graph.xvalues[v].xvalueUnion for v in (clamp.inputId, clamp.outputId)]
        assert [b.tensorValue.datatype for b in bodies] == [reference.QINT8] * 2
        assert bodies[0].quantParams.scale == bodies[1].quantParams.scale
        assert bodies[0].quantParams.zeroPoint == bodies[1].quantParams.zeroPoint
    step = _output_step(quantized)
    with torch.no_grad():
        expected = quantized(*x)
    (actual,) = reference.run(p, list(x))
    error = float((actual.reshape(expected.shape) - expected).abs().max())
    assert error <= 3 * step, f"error {error} is more than 3 output steps ({step})"


def test_dynamic_linear():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 4))
    x = (torch.randn(3, 16),)
    quantized = _quantize(model, x, dynamic=True)
    edge, prog = _export(quantized, x)
    assert prog.operators() == []
    delegates = _delegates(prog)
    fcs = 0
    for p, nargs in delegates:
        reference.check(p, nargs)
        names = _kind_names(p)
        fcs += names.count("XNNFullyConnected")
        assert reference.QDINT8 in _datatypes(p) and reference.QCINT8 in _datatypes(p)
        # fp32 -> convert -> qdint8 -> fully connected
        assert names[names.index("XNNFullyConnected") - 1] == "XNNConvert"
    assert fcs == 2
    checker = _CheckDelegates(edge.exported_program().module(), rel=0.05)
    with torch.no_grad():
        actual = checker.run(*x)
        expected = model(*x)
    assert checker.checked == len(delegates)
    # Dynamic int8 rows: within a few percent of the float model.
    assert float((actual - expected).abs().max()) <= 0.05 * float(expected.abs().max())


def mobilenet_v2_with_live_activations():
    """An untrained MobileNetV2 whose int8 output is not one constant.

    Untrained, its activations vanish (outputs ~1e-9, all one int8 value):
    BatchNorm statistics from a random batch keep every layer's output near
    unit scale, so the output (over 150 distinct values) shows any wrong byte.
    """
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = torchvision.models.mobilenet_v2(weights=None)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.momentum = 1.0
    with torch.no_grad():
        model.train()(torch.randn(2, 3, 224, 224))
    return model.eval()


def assert_near_qdq_graph(actual, expected, step):
    """Through MobileNetV2's 52 requantized layers (and XNNPACK's fixed-point
    adds) XNNPACK's arithmetic ends up to 22 output steps from PyTorch's q/dq
    graph, 4.9 on average (correlation 0.984; the q/dq graph is itself 26
    steps from the float model): each layer may round one step apart."""
    error = (actual.reshape(expected.shape) - expected).abs()
    assert float(error.max()) <= 32 * step, f"max error {float(error.max()) / step} steps"
    assert float(error.mean()) <= 8 * step, f"mean error {float(error.mean()) / step} steps"


def test_mobilenet_v2_static_int8_is_fully_delegated():
    model = mobilenet_v2_with_live_activations()
    x = (torch.randn(1, 3, 224, 224),)
    quantized = _quantize(model, x)
    _, prog = _export(quantized, x)
    assert prog.operators() == []
    ((p, nargs),) = _delegates(prog)
    reference.check(p, nargs)
    names = _kind_names(p)
    assert names.count("XNNConv2d") + names.count("XNNDepthwiseConv2d") == 52
    step = _output_step(quantized)
    with torch.no_grad():
        expected = quantized(*x)
    (actual,) = reference.run(p, list(x))
    assert len(torch.unique(expected)) > 100
    assert_near_qdq_graph(actual, expected, step)
