"""XNNPACK delegation of LLMs with a dynamic token dim: our Llama exported
by export_llm (forward(tokens [1, T], input_pos [T]), 1 <= T <= max_seq_len),
lowered with XnnpackPartitioner() and run in our C++ runtime.

- Dynamic dims with an upper bound are delegated: the payload stores the
  bound and the runtime reshapes to the actual T on every call. Unbounded
  dims are refused with the node and the reason.
- 8da4w linears (torchao's per-token int8 activations, 4-bit group-wise
  weights) become XNNPACK's qd8 convert + fully-connected with a qb4w filter
  (group size = block size), so none is left for the fused
  torchlight::linear_8da4w kernel. Per-channel weights go to qc8w / qc4w.
  Group sizes XNNPACK cannot take stay on our kernel, with a named reason.

Tolerances: fp32 programs within 1e-4 of the largest |logit|. XNNPACK
takes blockwise scales in bf16: the 0.5 runtime converts the payload's fp32
scales by multiplying by 1.00389105 and keeping the top 16 bits (spec
section 3), up to +0.4% per scale. Against PyTorch running the same 8da4w
model with those bf16 scales, logits agree within 1e-3 of the logit range
(float summation order only: XNNPACK's per-row activation quantization is
PyTorch's, measured equal to 4 digits) and greedy tokens are equal. Against
the model with its exact fp32 scales they agree within 5% of the range: the
tiny test models' large random weights amplify the bf16 rounding (measured
up to 4.1% at group 128, 2.3% at group 32).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from torch.export import Dim

sys.path.insert(0, str(Path(__file__).parent / "llm"))

from helpers import delegate_calls  # noqa: E402
from llm_helpers import MAX_SEQ, VOCAB, tiny_llama  # noqa: E402
import torchlight  # noqa: E402
from torchlight.backends.xnnpack import payload, reference  # noqa: E402
from torchlight.backends.xnnpack.partition.xnnpack_partitioner import \
    XnnpackPartitioner  # noqa: E402
from torchlight.backends.xnnpack.preprocess import pack_int4  # noqa: E402
from torchlight.backends.xnnpack.runtime_scales import as_xnnpack_computes  # noqa: E402
from torchlight.llm import export_llm, generate  # noqa: E402
from torchlight.llm.quantize import Int8DynActInt4WeightLinear, quantize_model  # noqa: E402
from torchlight.pte import pte_file  # noqa: E402

qd = torch.ops.quantized_decomposed
PREFILLS = (1, 3, 5, 7, MAX_SEQ)


def _llama(qmode=None, group=32):
    """A tiny Llama whose every linear width is a multiple of `group`."""
    if group == 128:
        model = tiny_llama(use_custom_op=False, dim=128, hidden_dim=256)
    else:
        model = tiny_llama(use_custom_op=False, hidden_dim=64)
    if qmode:
        assert quantize_model(model, qmode, group) == []
    return model


def _lower(model, partitioner=None):
    partitioner = partitioner or XnnpackPartitioner()
    edge = torchlight.to_edge_transform_and_lower(export_llm(model), partitioner=[partitioner])
    return edge, edge.to_executorch()


def _payloads(prog):
    found = []
    for delegate, _, processed in delegate_calls(prog):
        assert delegate.id == "XnnpackBackend"
        found.append(payload.parse(processed))
    return found


def _tensor(xvalue):
    body = xvalue.xvalueUnion
    return getattr(body, "tensorValue", body), getattr(body, "quantParams", None)


def _fully_connected(payloads):
    """(input value, filter value, filter quant params) of every FC node."""
    kinds = reference._kinds()
    found = []
    for p in payloads:
        values = p.graph.xvalues
        for xnode in p.graph.xnodes:
            if kinds[xnode.xnodeUnionType] == "XNNFullyConnected":
                body = xnode.xnodeUnion
                x, _ = _tensor(values[body.input1Id])
                w, wq = _tensor(values[body.filterId])
                found.append((x, w, wq, p))
    return found


def _quantized_linears(model):
    return [(n, m) for n, m in model.named_modules() if isinstance(m, Int8DynActInt4WeightLinear)]


def _logits(module, tokens, start):
    (out,) = module.run("forward", [tokens, torch.arange(start, start + tokens.shape[1])])
    return torch.as_tensor(out)


def _eager(model, tokens):
    model.reset_cache()
    with torch.no_grad():
        return model(tokens, torch.arange(tokens.shape[1]))


def _assert_near(got, want, fraction):
    span = float(want.max() - want.min())
    err = float((got - want).abs().max())
    assert err <= fraction * span, f"max error {err:.3g} > {fraction} of the range {span:.3g}"


# --- 8da4w -------------------------------------------------------------------------------------

@pytest.mark.parametrize("group", [32, 128])
def test_8da4w_every_linear_is_a_qb4w_fully_connected(group):
    model = _llama("8da4w", group)
    linears = _quantized_linears(model)
    edge, prog = _lower(model)
    ops = set(prog.operators())
    # Nothing of the 8da4w pattern is left outside the delegate, and the fused
    # kernel takes none of the delegated linears.
    assert not {op for op in ops if "quantized_decomposed" in op or "linear_8da4w" in op}, ops
    assert "aten::linear.out" not in ops and "aten::mm.out" not in ops
    fcs = _fully_connected(_payloads(prog))
    assert len(fcs) == len(linears) == 7 * 2 + 1
    weights = {m.weight.numpy().tobytes(): m for _, m in linears}
    for x, w, wq, p in fcs:
        assert x.datatype == reference.QDINT8 and w.datatype == reference.QBINT4
        assert wq.groupSize == group and wq.channelDim == 0
        # The constant decodes (spec section 3) to the model's own 4-bit values and scales.
        values = reference.unpack_int4(p.constant(w.constantBufferIdx), list(w.dims))
        module = weights[values.numpy().tobytes()]
        assert list(w.dims) == list(module.weight.shape)
        assert wq.scale == pytest.approx(module.scales.reshape(-1).tolist(), rel=1e-7)
    # The qdint8 inputs are per-token dynamic values made by XNNConvert.
    kinds = reference._kinds()
    for p in _payloads(prog):
        for xnode in p.graph.xnodes:
            if kinds[xnode.xnodeUnionType] == "XNNConvert":
                tensor, params = _tensor(p.graph.xvalues[xnode.xnodeUnion.outputId])
                assert tensor.datatype == reference.QDINT8 and params.numNonbatchDims == 1


def test_dynamic_token_dim_is_written_as_its_upper_bound():
    model = _llama("8da4w")
    _, prog = _lower(model)
    activations = [list(t.dims) for p in _payloads(prog) for t, _ in map(_tensor, p.graph.xvalues)
                   if t.flags == 1 and len(t.dims) == 3 and t.dims[0] == 1]  # [1, T, features]
    assert len(activations) >= 5
    assert all(dims[1] == MAX_SEQ for dims in activations), activations


@pytest.mark.parametrize("group", [32, 128])
def test_8da4w_runtime_matches_eager_for_each_prefill_length(runtime, group):
    model = _llama("8da4w", group)
    _, prog = _lower(model)
    bf16_scaled = as_xnnpack_computes(model)
    torch.manual_seed(1)
    for T in PREFILLS:
        tokens = torch.randint(0, VOCAB, (1, T))
        module = runtime.load(prog.buffer)  # fresh caches
        got = _logits(module, tokens, 0)
        want = _eager(bf16_scaled, tokens)
        assert got.shape == want.shape == (1, T, VOCAB)
        _assert_near(got, want, 1e-3)
        _assert_near(got, _eager(model, tokens), 0.05)


def test_8da4w_decode_steps_and_greedy_tokens(runtime):
    model = _llama("8da4w")
    _, prog = _lower(model)
    bf16_scaled = as_xnnpack_computes(model)
    tokens = torch.randint(0, VOCAB, (1, 12), generator=torch.Generator().manual_seed(2))
    want = _eager(bf16_scaled, tokens)
    module = runtime.load(prog.buffer)
    outs = [_logits(module, tokens[:, :5], 0)]  # prefill, then one token at a time
    for pos in range(5, 12):
        outs.append(_logits(module, tokens[:, pos:pos + 1], pos))
    _assert_near(torch.cat(outs, dim=1), want, 1e-3)

    prompt = [7, 1, 30, 2]
    expected = generate(bf16_scaled, prompt, max_new_tokens=8)
    module = runtime.load(prog.buffer)
    logits = _logits(module, torch.tensor([prompt]), 0)
    got = []
    for pos in range(len(prompt), len(prompt) + 8):
        got.append(int(logits[0, -1].argmax()))
        logits = _logits(module, torch.tensor([[got[-1]]]), pos)
    assert got == expected


# --- fp32 --------------------------------------------------------------------------------------

def test_fp32_llama_with_dynamic_tokens(runtime):
    model = _llama()
    n_linears = sum(1 for m in model.modules() if isinstance(m, torch.nn.Linear))
    _, prog = _lower(model)
    ops = set(prog.operators())
    assert "aten::linear.out" not in ops and "aten::mm.out" not in ops, ops
    assert len(_fully_connected(_payloads(prog))) == n_linears
    for T in PREFILLS:
        tokens = torch.randint(0, VOCAB, (1, T), generator=torch.Generator().manual_seed(T))
        got = _logits(runtime.load(prog.buffer), tokens, 0)
        want = _eager(model, tokens)
        scale = float(want.abs().max())
        assert float((got - want).abs().max()) <= 1e-4 * scale


# --- per-channel weights with per-token activations -------------------------------------------

class PerTokenLinear(torch.nn.Module):
    """linear(per-token q/dq(x), dequantize_per_channel(weight)) with int8
    (bits 8) or 4-bit (bits 4) symmetric per-channel weights."""

    def __init__(self, bits, k=48, n=20):
        super().__init__()
        qmax = (1 << (bits - 1)) - 1
        w = torch.randn(n, k)
        scales = w.abs().amax(dim=1) / qmax
        self.qmin, self.qmax = -qmax - 1, qmax
        self.register_buffer("weight", torch.round(w / scales[:, None]).clamp(
            -qmax - 1, qmax).to(torch.int8))
        self.register_buffer("scales", scales)
        self.register_buffer("zeros", torch.zeros(n, dtype=torch.int64))
        self.bias = torch.nn.Parameter(torch.randn(n))

    def forward(self, x):
        s, z = qd.choose_qparams_per_token_asymmetric(x, torch.int8)
        xdq = qd.dequantize_per_token(qd.quantize_per_token(x, s, z, -128, 127, torch.int8),
                                      s, z, -128, 127, torch.int8, torch.float32)
        w = qd.dequantize_per_channel(self.weight, self.scales, self.zeros, 0, self.qmin,
                                      self.qmax, torch.int8)
        return torch.nn.functional.linear(xdq, w, self.bias)


def _lower_module(model, example, dynamic_shapes=None, partitioner=None):
    ep = torch.export.export(model, example, dynamic_shapes=dynamic_shapes)
    partitioner = partitioner or XnnpackPartitioner()
    edge = torchlight.to_edge_transform_and_lower(ep, partitioner=[partitioner])
    return edge, edge.to_executorch()


@pytest.mark.parametrize("bits,datatype", [(8, reference.QCINT8), (4, reference.QCINT4)])
def test_per_channel_weights_lower_to_qc8w_and_qc4w(runtime, bits, datatype):
    torch.manual_seed(3)
    model = PerTokenLinear(bits).eval()
    rows = Dim("rows", min=1, max=16)
    _, prog = _lower_module(model, (torch.randn(4, 48),), {"x": {0: rows}})
    assert prog.operators() == []
    ((x, w, wq, p),) = _fully_connected(_payloads(prog))
    assert x.datatype == reference.QDINT8 and w.datatype == datatype
    if bits == 4:
        assert torch.equal(reference.unpack_int4(p.constant(w.constantBufferIdx), list(w.dims)),
                           model.weight)
    for n in (1, 7, 16):
        inp = torch.randn(n, 48)
        (got,) = runtime.load(prog.buffer).run("forward", [inp])
        with torch.no_grad():
            want = model(inp)
        _assert_near(torch.as_tensor(got), want, 1e-3)


def test_one_group_per_row_is_per_channel_4_bit():
    """48 is no multiple of 32 (no blockwise form), but one group a row is qc4w."""
    torch.manual_seed(4)
    model = torch.nn.Sequential(Int8DynActInt4WeightLinear(torch.nn.Linear(48, 8), 48)).eval()
    _, prog = _lower_module(model, (torch.randn(1, 3, 48),))
    ((x, w, wq, p),) = _fully_connected(_payloads(prog))
    assert w.datatype == reference.QCINT4 and len(wq.scale) == 8


# --- what stays on our kernels, and why --------------------------------------------------------

def _rejections(partitioner, operator_name):
    return [reason for _, target, reason in partitioner.rejected if target == operator_name]


def test_group_size_xnnpack_cannot_take_stays_on_the_fused_kernel(runtime):
    torch.manual_seed(5)
    model = torch.nn.Sequential(Int8DynActInt4WeightLinear(torch.nn.Linear(64, 8), 16)).eval()
    partitioner = XnnpackPartitioner()
    x = torch.randn(1, 3, 64)
    _, prog = _lower_module(model, (x,), partitioner=partitioner)
    reasons = _rejections(partitioner, "quantized_decomposed::dequantize_per_channel_group")
    assert reasons and "group size 16" in reasons[0] and "multiple of 32" in reasons[0]
    assert any("group size 16" in r for r in _rejections(partitioner, "aten::linear"))
    assert "torchlight::linear_8da4w.out" in prog.operators()
    assert not _payloads(prog)
    (got,) = runtime.load(prog.buffer).run("forward", [x])
    with torch.no_grad():
        want = model(x)
    _assert_near(torch.as_tensor(got), want, 1e-3)


def test_asymmetric_group_weights_are_refused_with_the_reason():
    model = _llama("8da4w")
    model.layers[0].attention.wq.zeros.fill_(1.0)
    partitioner = XnnpackPartitioner()
    _, prog = _lower(model, partitioner)
    reasons = _rejections(partitioner, "aten::linear")
    assert len(reasons) == 1 and "non-zero zero points" in reasons[0]
    fcs = _fully_connected(_payloads(prog))
    assert len(fcs) == len(_quantized_linears(model)) - 1
    # The refused one runs on quantized_decomposed kernels (not fusable either: asymmetric).
    assert "quantized_decomposed::dequantize_per_channel_group.out" in prog.operators()


def test_weight_only_4_bit_is_not_delegated():
    model = _llama("4w")
    partitioner = XnnpackPartitioner()
    _, prog = _lower(model, partitioner)
    assert not _fully_connected(_payloads(prog))
    reasons = _rejections(partitioner, "quantized_decomposed::dequantize_per_channel_group")
    assert reasons and all("per-token" in r for r in reasons)


def test_unbounded_dynamic_dim_is_refused_with_the_node_and_reason():
    model = torch.nn.Sequential(torch.nn.Linear(8, 4)).eval()
    partitioner = XnnpackPartitioner()
    ep = torch.export.export(model, (torch.randn(3, 8),), dynamic_shapes={"input": {0: Dim("n")}})
    edge = torchlight.to_edge_transform_and_lower(ep, partitioner=[partitioner])
    assert not [n for n in edge.exported_program().graph.nodes if "call_delegate" in str(n.target)]
    names = [(name, reason) for name, target, reason in partitioner.rejected
             if target == "aten::linear"]
    assert names and "no upper bound" in names[0][1] and names[0][0].startswith("linear")


def test_reshape_of_a_dynamic_dim_infers_it():
    class Heads(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(16, 16)

        def forward(self, x):
            return torch.relu(self.proj(x).view(1, -1, 4, 4).transpose(1, 2))

    model = Heads().eval()
    _, prog = _lower_module(model, (torch.randn(1, 3, 16),),
                            {"x": {1: Dim("t", min=1, max=10)}})
    assert prog.operators() == []
    (p,) = _payloads(prog)
    kinds = reference._kinds()
    reshapes = [n.xnodeUnion for n in p.graph.xnodes
                if kinds[n.xnodeUnionType] == "XNNStaticReshape"]
    assert [list(r.newShape) for r in reshapes] == [[1, 0, 4, 4]]


def test_reshape_of_a_dynamic_dim_runs(runtime):
    class Heads(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(16, 16)

        def forward(self, x):
            return self.proj(x).view(1, -1, 4, 4).transpose(1, 2) * 2.0

    torch.manual_seed(6)
    model = Heads().eval()
    _, prog = _lower_module(model, (torch.randn(1, 3, 16),),
                            {"x": {1: Dim("t", min=1, max=10)}})
    for t in (1, 4, 10):
        x = torch.randn(1, t, 16)
        (got,) = runtime.load(prog.buffer).run("forward", [x])
        with torch.no_grad():
            want = model(x)
        got = torch.as_tensor(got)
        assert got.shape == want.shape
        assert float((got - want).abs().max()) <= 1e-4 * float(want.abs().max())


def test_pack_int4_low_nibble_first():
    values = torch.tensor([[-8, 7, 0], [1, -1, 3]], dtype=torch.int8)
    # +8: [[0, 15, 8], [9, 7, 11]]; rows of 3 pad to 2 bytes.
    assert pack_int4(values) == bytes([0xF0, 0x08, 0x79, 0x0B])
    assert torch.equal(reference.unpack_int4(pack_int4(values), [2, 3]), values)


# --- examples/llm/export_gpt.py -X -------------------------------------------------------------

def test_export_gpt_cli_delegates_8da4w_linears(tmp_path, runtime):
    """The shipped GPT exported with `-qmode 8da4w -G 32 -X`: its quantized
    linears run as XNNPACK qb4w fully-connected nodes, and the program's last
    logits match PyTorch running the same model (bf16 scales, as above)."""
    import importlib.util
    from helpers import REPO
    from torchlight.llm.gpt_weights import load_nanogpt_checkpoint
    spec = importlib.util.spec_from_file_location("export_gpt",
                                                  REPO / "examples/llm/export_gpt.py")
    cli = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cli)
    pte = tmp_path / "gpt_8da4w_xnnpack.pte"
    # The byte-level checkpoint (export_gpt.py's default is the BPE model).
    checkpoint = REPO / "examples/llm/models/brown_gpt.pt"
    assert cli.main(["--checkpoint", str(checkpoint), "--pte", str(pte), "--tokens", "0",
                     "-qmode", "8da4w", "-G", "32", "-X"]) == 0
    f = pte_file.read_pte(pte.read_bytes())
    operators = {op.qualified_name for op in f.program.execution_plan[0].operators}
    assert not {op for op in operators if "linear_8da4w" in op or "per_channel_group" in op}
    fcs = [w for _, w, _, _ in _fully_connected(
        [payload.parse(f.delegate_bytes(d.processed)) for d in f.program.execution_plan[0]
         .delegates])]
    assert fcs and all(w.datatype == reference.QBINT4 for w in fcs)

    model = load_nanogpt_checkpoint(torch.load(checkpoint, map_location="cpu",
                                               weights_only=True))
    quantize_model(model, "8da4w", 32)
    model = as_xnnpack_computes(model).eval()
    tokens = torch.tensor([list(b"The jury said")])
    got = _logits(runtime.load(pte.read_bytes()), tokens, 0)
    want = _eager(model, tokens)[:, -1:]
    assert got.shape == want.shape
    _assert_near(got, want, 1e-3)


def test_dynamically_quantized_partitioner_takes_each_8da4w_linear_whole(runtime):
    """Upstream's export_llama puts XnnpackDynamicallyQuantizedPartitioner
    first: one partition per linear, its per-token chain and weight inside."""
    from torchlight.backends.xnnpack.partition.xnnpack_partitioner import \
        XnnpackDynamicallyQuantizedPartitioner
    model = _llama("8da4w")
    edge = torchlight.to_edge_transform_and_lower(
        export_llm(model), partitioner=[XnnpackDynamicallyQuantizedPartitioner(),
                                        XnnpackPartitioner()])
    prog = edge.to_executorch()
    payloads = _payloads(prog)
    linears = _quantized_linears(model)
    fcs = _fully_connected(payloads)
    assert len(fcs) == len(linears) and all(w.datatype == reference.QBINT4 for _, w, _, _ in fcs)
    assert not {op for op in prog.operators() if "quantized_decomposed" in op}
    tokens = torch.randint(0, VOCAB, (1, 6), generator=torch.Generator().manual_seed(7))
    got = _logits(runtime.load(prog.buffer), tokens, 0)
    _assert_near(got, _eager(as_xnnpack_computes(model), tokens), 1e-3)


def test_dynamically_quantized_partitioner_on_a_pt2e_dynamic_graph(runtime):
    """Per-op mode keeps pt2e's choose_qparams -> q -> dq chain with its linear:
    each linear is a qd8-f32-qc8w fully-connected, no q/dq is left outside."""
    from test_xnnpack_quant import _quantize
    from torchlight.backends.xnnpack.partition.xnnpack_partitioner import \
        XnnpackDynamicallyQuantizedPartitioner
    torch.manual_seed(8)
    model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(),
                                torch.nn.Linear(8, 4)).eval()
    x = (torch.randn(3, 16),)
    quantized = _quantize(model, x, dynamic=True)
    edge = torchlight.to_edge_transform_and_lower(
        torch.export.export(quantized, x),
        partitioner=[XnnpackDynamicallyQuantizedPartitioner(), XnnpackPartitioner()])
    prog = edge.to_executorch()
    assert prog.operators() == []
    fcs = _fully_connected(_payloads(prog))
    assert [(i.datatype, w.datatype) for i, w, _, _ in fcs] == \
        [(reference.QDINT8, reference.QCINT8)] * 2
    (got,) = runtime.load(prog.buffer).run("forward", list(x))
    # pt2e's graph quantizes x per tensor, XNNPACK's qd8 per row (as upstream
    # runs it): a quantization step or so apart, 1% of the output range.
    _assert_near(torch.as_tensor(got), quantized(*x), 0.01)


@pytest.mark.parametrize("group", [32, 64, 128, 256])
def test_each_group_size_runs_as_qb4w(runtime, group):
    torch.manual_seed(9)
    model = torch.nn.Sequential(Int8DynActInt4WeightLinear(torch.nn.Linear(512, 24), group))
    model = model.eval()
    rows = Dim("rows", min=1, max=9)
    _, prog = _lower_module(model, (torch.randn(1, 4, 512),), {"input": {1: rows}})
    assert prog.operators() == []
    ((x, w, wq, p),) = _fully_connected(_payloads(prog))
    assert w.datatype == reference.QBINT4 and wq.groupSize == group
    assert len(wq.scale) == 24 * 512 // group
    bf16_scaled = as_xnnpack_computes(model)
    for n in (1, 5, 9):
        inp = torch.randn(1, n, 512)
        (got,) = runtime.load(prog.buffer).run("forward", [inp])
        with torch.no_grad():
            _assert_near(torch.as_tensor(got), bf16_scaled(inp), 1e-3)
