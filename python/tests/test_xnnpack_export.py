"""XNNPACK export: XnnpackPartitioner and preprocess.

Our payloads are read back with the spec-derived reader
(torchlight.backends.xnnpack.reference): checked against the format's rules,
compared field by field with upstream's mlp_xnnpack.pte, and computed node by
node in PyTorch against eager (float32: max error <= 1e-4 x max |output|).
The reader itself is first checked on upstream's file and its recorded output.
"""

from __future__ import annotations

import math
from typing import List

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import torchlight
from helpers import FIXTURES, delegate_calls
from torchlight.backends.xnnpack import XnnpackPartitioner, payload, reference
from torchlight.backends.xnnpack import schema as xnn_schema
from torchlight.delegation import LoweredBackendModule
from torchlight.pte import pte_file

INVALID = 0xFFFFFFFF


def _lower(model, inputs, partitioner=None, transform_and_lower=True):
    # Many exports of the same forward would otherwise hit dynamo's recompile limit.
    torch._dynamo.reset()
    ep = torch.export.export(model, tuple(inputs))
    partitioner = partitioner or XnnpackPartitioner()
    if transform_and_lower:
        edge = torchlight.to_edge_transform_and_lower(ep, partitioner=[partitioner])
    else:
        edge = torchlight.to_edge(ep).to_backend(partitioner)
    return edge, edge.to_executorch()


def _delegates(prog):
    """(payload, number of DelegateCall args) per delegate call, in order."""
    found = []
    for delegate, call, processed in delegate_calls(prog):
        assert delegate.id == "XnnpackBackend" and delegate.compile_specs == []
        found.append((payload.parse(processed), len(call.args)))
    return found


def _close(actual, expected, rel=1e-4):
    scale = max(float(expected.abs().max()), 1e-6)
    error = float((actual.reshape(expected.shape) - expected).abs().max())
    assert error <= rel * scale, f"max error {error} > {rel} x {scale}"


def _kind_names(p):
    kinds = reference._kinds()
    return [kinds[n.xnodeUnionType] for n in p.graph.xnodes]


def _check_fully_delegated(model, inputs, **kwargs):
    model = model.eval()
    edge, prog = _lower(model, inputs, **kwargs)
    assert prog.operators() == [], "some operators were left to portable kernels"
    ((p, nargs),) = _delegates(prog)
    reference.check(p, nargs)
    # The delegate's arguments are the partition's inputs in first-use order.
    checker = _CheckDelegates(edge.exported_program().module())
    with torch.no_grad():
        expected = model(*inputs)
        actual = checker.run(*inputs)
    assert checker.checked == 1
    expected = expected if isinstance(expected, tuple) else (expected,)
    actual = actual if isinstance(actual, (tuple, list)) else (actual,)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        _close(a, e)
    return p


# --- the reader on upstream's file ---------------------------------------------------------------

def test_reader_computes_upstream_fixture_output():
    f = pte_file.read_pte((FIXTURES / "mlp_xnnpack.pte").read_bytes())
    plan = f.program.execution_plan[0]
    p = payload.parse(f.delegate_bytes(plan.delegates[0].processed))
    reference.check(p, len(plan.chains[0].instructions[0].instr_args.args))
    x = torch.from_numpy(np.fromfile(FIXTURES / "mlp_xnnpack.input0.bin", dtype=np.float32))
    y = torch.from_numpy(np.fromfile(FIXTURES / "mlp_xnnpack.output0.bin", dtype=np.float32))
    (out,) = reference.run(p, [x.reshape(2, 16)])
    assert torch.allclose(out.reshape(-1), y, atol=1e-6, rtol=0)


def test_reader_rejects_broken_payloads():
    f = pte_file.read_pte((FIXTURES / "mlp_xnnpack.pte").read_bytes())
    plan = f.program.execution_plan[0]
    blob = bytearray(f.delegate_bytes(plan.delegates[0].processed))
    with pytest.raises(payload.PayloadError, match="shorter"):
        payload.parse(bytes(blob[:20]))
    bad = bytearray(blob)
    bad[4:8] = b"XH99"
    with pytest.raises(payload.PayloadError, match="magic"):
        payload.parse(bytes(bad))
    bad = bytearray(blob)
    bad[14:18] = (10 ** 6).to_bytes(4, "little")
    with pytest.raises(payload.PayloadError, match="outside"):
        payload.parse(bytes(bad))
    p = payload.parse(bytes(blob))
    with pytest.raises(payload.PayloadError, match="num_externs"):
        reference.check(p, 3)


# --- the fixture's model, exported by us ------------------------------------------------------

class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def _fixture_payload():
    f = pte_file.read_pte((FIXTURES / "mlp_xnnpack.pte").read_bytes())
    plan = f.program.execution_plan[0]
    return plan, payload.parse(f.delegate_bytes(plan.delegates[0].processed))


@pytest.mark.parametrize("transform_and_lower", [True, False])
def test_mlp_payload_decodes_like_upstream(transform_and_lower):
    model = Mlp().eval()
    x = torch.randn(2, 16)
    _, prog = _lower(model, (x,), transform_and_lower=transform_and_lower)
    ours_plan = prog.program.execution_plan[0]
    theirs_plan, theirs = _fixture_payload()
    assert [type(i.instr_args).__name__ for i in ours_plan.chains[0].instructions] == \
        ["DelegateCall"]
    assert ours_plan.chains[0].instructions[0].instr_args.args == \
        theirs_plan.chains[0].instructions[0].instr_args.args == [0, 1]
    assert ours_plan.operators == []
    ((ours, _),) = _delegates(prog)

    # Header: same layout rules (sizes differ only with the flatbuffer builder).
    assert ours.identifier == theirs.identifier == b"XN01"
    assert ours.flatbuffer_offset == theirs.flatbuffer_offset == 32
    assert ours.constant_data_offset == 32 + (ours.flatbuffer_size + 15) // 16 * 16
    assert ours.constant_data_size == theirs.constant_data_size == 2704

    g, t = ours.graph, theirs.graph
    assert g.version == t.version == b"0"
    assert g.numExterns == t.numExterns == 2
    assert list(g.inputIds) == list(t.inputIds) == [0]
    assert list(g.outputIds) == list(t.outputIds) == [6]
    fields = ("datatype", "numDims", "constantBufferIdx", "externalId", "flags", "idOut")
    for a, b in zip(g.xvalues, t.xvalues, strict=True):
        assert a.xvalueUnionType == b.xvalueUnionType
        assert {f: getattr(a.xvalueUnion, f) for f in fields} == \
            {f: getattr(b.xvalueUnion, f) for f in fields}
        assert list(a.xvalueUnion.dims) == list(b.xvalueUnion.dims)
    for a, b in zip(g.xnodes, t.xnodes, strict=True):
        assert a.xnodeUnionType == b.xnodeUnionType
        assert vars(a.xnodeUnion) == vars(b.xnodeUnion)
        assert (a.outputMinMax is None) == (b.outputMinMax is None)
        if a.outputMinMax is not None:
            assert vars(a.outputMinMax) == vars(b.outputMinMax)
    assert [(c.offset, c.size) for c in g.constantData] == \
        [(c.offset, c.size) for c in t.constantData]

    # Our constants are the model's own weights, [out, in] row-major.
    weights = [model.fc1.weight, model.fc1.bias, model.fc2.weight, model.fc2.bias]
    for i, w in enumerate(weights, 1):
        assert ours.constant(i) == w.detach().numpy().tobytes()
    (out,) = reference.run(ours, [x])
    with torch.no_grad():
        _close(out, model(x))


def test_flatbuffer_omits_defaults_like_flatc():
    """The input's external_id 0 and a fused ReLU's output_min 0.0 are left
    out of the wire (absent vtable slots), as flatc leaves them out of
    upstream's file."""
    _, prog = _lower(Mlp(), (torch.randn(2, 16),))
    ((ours, _),) = _delegates(prog)
    _, theirs = _fixture_payload()
    blob = payload.serialize(ours.graph, ours.constants)
    for p in (ours, theirs):
        data = payload.serialize(p.graph, p.constants) if p is theirs else blob
        fb = data[32:32 + int.from_bytes(data[14:18], "little")]
        root = xnn_schema.table("XNNGraph").XNNGraph.GetRootAs(fb, 0)
        first = xnn_schema.table("XNNTensorValue").XNNTensorValue()
        union = root.Xvalues(0).XvalueUnion()
        first.Init(union.Bytes, union.Pos)
        assert first.Flags() == 1 and first.ExternalId() == 0
        assert first._tab.Offset(4 + 2 * 4) == 0  # external_id: absent
        bounds = root.Xnodes(0).OutputMinMax()
        assert bounds.OutputMax() == math.inf
        assert bounds._tab.Offset(4) == 0  # output_min 0.0: absent


# --- operators ----------------------------------------------------------------------------------

class Unary(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class Binary(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, y):
        return self.fn(x, y)


UNARY = {
    "relu": (torch.relu, "XNNClamp"),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 0.7), "XNNClamp"),
    "clamp": (lambda x: torch.clamp(x, min=-0.3), "XNNClamp"),
    "sigmoid": (torch.sigmoid, "XNNSigmoid"),
    "tanh": (torch.tanh, "XNNTanh"),
    "hardswish": (F.hardswish, "XNNHardswish"),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), "XNNLeakyReLU"),
    "elu": (lambda x: F.elu(x, 0.5), "XNNELU"),
    "abs": (torch.abs, "XNNAbs"),
    "neg": (torch.neg, "XNNNegate"),
    "floor": (torch.floor, "XNNFloor"),
    "ceil": (torch.ceil, "XNNCeiling"),
    "sqrt": (lambda x: torch.sqrt(x.abs()), "XNNSquareRoot"),
    "square": (lambda x: x ** 2, "XNNSquare"),
    "softmax": (lambda x: torch.softmax(x, -1), "XNNSoftmax"),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    fn, kind = UNARY[name]
    p = _check_fully_delegated(Unary(fn), (torch.randn(2, 3, 5) * 3,))
    assert kind in _kind_names(p)


BINARY = {
    "add": (torch.add, "XNNAdd"), "sub": (torch.sub, "XNNSubtract"),
    "mul": (torch.mul, "XNNMultiply"), "div": (lambda a, b: a / (b.abs() + 1), "XNNDiv"),
    "minimum": (torch.minimum, "XNNMinimum"), "maximum": (torch.maximum, "XNNMaximum"),
    "add_scalar": (lambda a, b: a + 2.5 + b, "XNNAdd"),
    "broadcast": (lambda a, b: a * b[:1, :, 2:3] - b[:, :1, :], "XNNMultiply"),
    "bmm": (lambda a, b: torch.bmm(a, b.transpose(1, 2)), "XNNBatchMatrixMultiply"),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name):
    fn, kind = BINARY[name]
    p = _check_fully_delegated(Binary(fn), (torch.randn(3, 4, 5), torch.randn(3, 4, 5)))
    assert kind in _kind_names(p)


def test_add_relu_is_fused():
    p = _check_fully_delegated(Binary(lambda a, b: torch.relu(a + b)),
                               (torch.randn(3, 4), torch.randn(3, 4)))
    assert _kind_names(p) == ["XNNAdd"]
    assert p.graph.xnodes[0].outputMinMax.outputMax == math.inf


class Conv(torch.nn.Module):
    def __init__(self, cin, cout, k, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 transposed=False, output_padding=0, bn=False, act=None):
        super().__init__()
        if transposed:
            self.conv = torch.nn.ConvTranspose2d(cin, cout, k, stride, padding, output_padding,
                                                 groups, bias)
        else:
            self.conv = torch.nn.Conv2d(cin, cout, k, stride, padding, dilation, groups, bias)
        self.bn = torch.nn.BatchNorm2d(cout) if bn else None
        self.act = act
        if bn:
            with torch.no_grad():
                self.bn.running_mean.uniform_(-1, 1)
                self.bn.running_var.uniform_(0.5, 2)
                self.bn.weight.uniform_(0.5, 1.5)
                self.bn.bias.uniform_(-1, 1)

    def forward(self, x):
        y = self.conv(x)
        if self.bn is not None:
            y = self.bn(y)
        return self.act(y) if self.act is not None else y


CONVS = {
    "plain": (dict(cin=3, cout=8, k=3), "XNNConv2d"),
    "strided_padded": (dict(cin=4, cout=6, k=3, stride=2, padding=1), "XNNConv2d"),
    "dilated_no_bias": (dict(cin=4, cout=6, k=3, dilation=2, bias=False), "XNNConv2d"),
    "grouped": (dict(cin=8, cout=12, k=3, groups=4, padding=1), "XNNConv2d"),
    "depthwise": (dict(cin=8, cout=8, k=3, groups=8, padding=1), "XNNDepthwiseConv2d"),
    "depthwise_multiplier": (dict(cin=4, cout=8, k=3, groups=4), "XNNDepthwiseConv2d"),
    "bn_relu6": (dict(cin=3, cout=8, k=3, bn=True, act=F.relu6), "XNNConv2d"),
    "transposed": (dict(cin=6, cout=4, k=3, stride=2, padding=1, output_padding=1,
                        transposed=True), "XNNConvTranspose2d"),
    "transposed_grouped": (dict(cin=6, cout=4, k=2, stride=2, groups=2, transposed=True),
                           "XNNConvTranspose2d"),
}


@pytest.mark.parametrize("name", sorted(CONVS))
def test_convolution(name):
    kwargs, kind = CONVS[name]
    p = _check_fully_delegated(Conv(**kwargs), (torch.randn(2, kwargs["cin"], 9, 11),))
    names = _kind_names(p)
    assert names.count(kind) == 1
    # NCHW in and out; the convolution itself runs on NHWC values.
    conv = next(n.xnodeUnion for n in p.graph.xnodes
                if reference._kinds()[n.xnodeUnionType] == kind)
    x = p.graph.xvalues[conv.input1Id].xvalueUnion
    assert list(x.dims) == [2, 9, 11, kwargs["cin"]]
    assert names.count("XNNStaticTranspose") == 2


def test_batch_norm_folds_into_conv():
    p = _check_fully_delegated(Conv(3, 8, 3, bn=True, act=torch.relu),
                               (torch.randn(1, 3, 8, 8),))
    assert [k for k in _kind_names(p) if k != "XNNStaticTranspose"] == ["XNNConv2d"]
    conv = p.graph.xnodes[1]
    assert conv.outputMinMax.outputMin == 0.0


class Pools(torch.nn.Module):
    def forward(self, x):
        a = F.max_pool2d(x, 3, 2, 1)
        b = F.avg_pool2d(x, 2)
        c = F.max_pool2d(x, 2, dilation=2)
        return a, b, c, x.mean(dim=(-1, -2), keepdim=True), F.adaptive_avg_pool2d(x, 1)


def test_pooling():
    p = _check_fully_delegated(Pools(), (torch.randn(2, 5, 10, 12),))
    names = _kind_names(p)
    assert names.count("XNNMaxPooling2d") == 2 and names.count("XNNAvgPooling2d") == 1
    assert names.count("XNNGlobalAvgPooling2d") == 2


class Shapes(torch.nn.Module):
    def forward(self, x, y):
        a = torch.cat([x, y, x], dim=1)
        b = a.permute(0, 2, 1)
        c = b[:, 1:3, :]
        d = F.pad(c, (1, 2, 0, 1), value=0.5)
        return d.reshape(2, -1), torch.cat([x, y], dim=-1)


def test_data_movement():
    p = _check_fully_delegated(Shapes(), (torch.randn(2, 3, 4), torch.randn(2, 3, 4)))
    names = _kind_names(p)
    for kind in ("XNNConcatenate3", "XNNConcatenate2", "XNNStaticTranspose", "XNNStaticSlice",
                 "XNNStaticConstantPad", "XNNStaticReshape"):
        assert kind in names


class NhwcChain(torch.nn.Module):
    """Convolutions with element-wise ops, cat, pad, slice and resizing
    between them: all of it stays NHWC (no transposes inside)."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.b = torch.nn.Conv2d(8, 4, 1)

    def forward(self, x):
        a = torch.relu(self.a(x))
        c = torch.cat([a, torch.sigmoid(a)], dim=1)
        c = F.pad(c, (1, 1, 1, 1))[:, :, 1:-1, 1:-1]
        up = F.interpolate(self.b(c), scale_factor=2, mode="bilinear", align_corners=False)
        up2 = F.interpolate(self.b(c), size=(13, 9), mode="bilinear", align_corners=True)
        return up * 2 + 1, up2


def test_nhwc_chain_has_transposes_only_at_the_edges():
    p = _check_fully_delegated(NhwcChain(), (torch.randn(1, 3, 6, 7),))
    names = _kind_names(p)
    assert names.count("XNNStaticTranspose") == 3  # one in, two out
    assert names.count("XNNStaticResizeBilinear2D") == 2


class Head(torch.nn.Module):
    """mean over H/W then flatten: the NHWC->NCHW step moves only size-1
    dims, so it is a reshape, not a transpose."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 6, 3)
        self.fc = torch.nn.Linear(6, 2)

    def forward(self, x):
        return self.fc(self.conv(x).mean(dim=(2, 3), keepdim=True).flatten(1))


def test_global_pool_head():
    p = _check_fully_delegated(Head(), (torch.randn(2, 3, 8, 8),))
    assert _kind_names(p).count("XNNStaticTranspose") == 1


def test_decomposed_linear_lowers_to_fully_connected():
    """to_edge without keeping linear: addmm/mm of a transposed constant."""
    for bias in (True, False):
        model = torch.nn.Linear(5, 3, bias=bias).eval()
        config = torchlight.EdgeCompileConfig(preserve_ops=())
        ep = torch.export.export(model, (torch.randn(4, 5),))
        prog = torchlight.to_edge(ep, compile_config=config).to_backend(
            XnnpackPartitioner()).to_executorch()
        assert prog.operators() == []
        ((p, nargs),) = _delegates(prog)
        reference.check(p, nargs)
        assert _kind_names(p) == ["XNNFullyConnected"]
        x = torch.randn(4, 5)
        with torch.no_grad():
            _close(reference.run(p, [x])[0], model(x))


def test_linear_on_3d_input():
    _check_fully_delegated(torch.nn.Linear(6, 4), (torch.randn(2, 3, 6),))


def test_passthrough_and_repeated_outputs_get_their_own_values():
    class M(torch.nn.Module):
        def forward(self, x):
            y = torch.relu(x)
            return y, y.clone(), y
    p = _check_fully_delegated(M(), (torch.randn(3, 4),))
    # relu and clone leave the partition (the program returns relu twice).
    assert len(p.graph.outputIds) == 2 and len(set(p.graph.outputIds)) == 2
    assert _kind_names(p) == ["XNNClamp", "XNNClamp"]  # relu, then a copy for the clone


# --- partitioning -----------------------------------------------------------------------------

class Mixed(torch.nn.Module):
    """Delegated and portable operators alternate (cumsum, and an int64
    argmax, have no XNNPACK lowering)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.fc = torch.nn.Linear(4, 5)

    def forward(self, x):
        a = torch.relu(self.conv(x))
        b = torch.cumsum(a, dim=1)
        c = self.fc(b.mean(dim=(2, 3), keepdim=True).flatten(1))
        return torch.sigmoid(c), c.argmax(dim=1)


class _CheckDelegates(torch.fx.Interpreter):
    """Runs an exported program eagerly; at each delegate call also runs our
    payload with the reader and compares it with the partition's own graph."""

    def __init__(self, gm, rel=1e-4):
        super().__init__(gm)
        self.checked = 0
        self.rel = rel

    def call_function(self, target, args, kwargs):
        result = super().call_function(target, args, kwargs)
        if getattr(target, "_torchlight_delegate", False):
            lowered: LoweredBackendModule = args[0]
            p = payload.parse(lowered.processed_bytes)
            inputs = list(args[1:])
            reference.check(p, len(inputs) + len(result))
            for actual, expected in zip(reference.run(p, inputs), result, strict=True):
                _close(actual, expected, self.rel)
            self.checked += 1
        return result


def test_mixed_program_partitions_alternate_with_portable_ops():
    model = Mixed().eval()
    x = torch.randn(2, 3, 8, 8)
    partitioner = XnnpackPartitioner()
    edge, prog = _lower(model, (x,), partitioner)
    kinds = [type(i.instr_args).__name__
             for i in prog.program.execution_plan[0].chains[0].instructions]
    assert kinds.count("DelegateCall") == 2
    assert kinds.index("KernelCall") > kinds.index("DelegateCall")
    assert "aten::cumsum.out" in prog.operators()
    rejected = {name: reason for name, _, reason in partitioner.rejected}
    assert "cumsum" in rejected and "no XNNPACK lowering" in rejected["cumsum"]
    checker = _CheckDelegates(edge.exported_program().module())
    with torch.no_grad():
        outputs = checker.run(x)
        expected = model(x)
    assert checker.checked == 2
    _close(outputs[0], expected[0])
    assert torch.equal(outputs[1], expected[1])


def test_verbose_names_node_and_reason(capsys):
    class M(torch.nn.Module):
        def forward(self, x):
            return torch.softmax(x, dim=0) + torch.relu(x.to(torch.float64)).float()
    _lower(M(), (torch.randn(3, 4),), XnnpackPartitioner(verbose=True))
    err = capsys.readouterr().err
    assert "node '_softmax'" in err and "only normalizes the last dim" in err
    assert "torch.float64" in err and "XNNPACK takes float32" in err


def test_bounded_dynamic_dims_are_delegated_as_their_upper_bound():
    model = torch.nn.Linear(4, 2)
    ep = torch.export.export(model, (torch.randn(3, 4),),
                             dynamic_shapes=({0: torch.export.Dim("batch", max=8)},))
    prog = torchlight.to_edge_transform_and_lower(
        ep, partitioner=[XnnpackPartitioner()]).to_executorch()
    ((p, nargs),) = _delegates(prog)
    externals = [x.xvalueUnion for x in p.graph.xvalues if x.xvalueUnion.flags]
    assert [list(t.dims) for t in externals] == [[8, 4], [8, 2]]


def test_unbounded_dynamic_dims_are_left_out_with_a_reason():
    model = torch.nn.Linear(4, 2)
    ep = torch.export.export(model, (torch.randn(3, 4),),
                             dynamic_shapes=({0: torch.export.Dim("batch")},))
    partitioner = XnnpackPartitioner()
    # (to_executorch then refuses the unbounded size for memory planning.)
    edge = torchlight.to_edge_transform_and_lower(ep, partitioner=[partitioner])
    assert not [n for n in edge.exported_program().graph.nodes if "call_delegate" in str(n.target)]
    assert any("dynamic dim" in reason and "no upper bound" in reason
               for _, _, reason in partitioner.rejected)


def test_constants_move_into_the_payload():
    """Weights the delegate packs are not also kept in the program."""
    _, prog = _lower(Mlp(), (torch.randn(2, 16),))
    program = prog.program
    assert len(program.execution_plan[0].values) == 2  # the input and the output
    assert all(len(s.offsets) <= 1 for s in [program.constant_segment])


def test_executorch_import_paths():
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import \
        XnnpackPartitioner as Upstream
    from executorch.exir import to_edge_transform_and_lower
    assert Upstream is XnnpackPartitioner
    assert to_edge_transform_and_lower is torchlight.to_edge_transform_and_lower


@pytest.mark.parametrize("name", ["mobilenet_v2", "resnet18"])
def test_torchvision_models_are_fully_delegated(name):
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    p = _check_fully_delegated(model, (torch.randn(1, 3, 224, 224),))
    assert _kind_names(p).count("XNNStaticTranspose") == 1  # the input only
