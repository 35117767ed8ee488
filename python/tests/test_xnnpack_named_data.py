"""XNNPACK payloads in upstream main's layout: constants (and quantization
scales) in the program's named data, keyed by the SHA-256 of their bytes,
instead of the payload's constant region (shared/spec/xnnpack-format.md,
"Constants"). Our exporter writes release 0.5's layout; these tests move an
exported program's constants into named data and run it through the whole
runtime (Program.named_data -> method load -> XnnpackBackend.init)."""

from __future__ import annotations

import copy
import hashlib
import struct

import pytest
import torch

import test_xnnpack_export as ex
from test_xnnpack_quant import ConvNet, _quantize
from torchlight.backends.xnnpack import payload as xpayload
from torchlight.pte.pte_file import read_pte, serialize_pte

NAMED = 0xFFFFFFFFFFFFFFFF  # ConstantDataOffset.offset of a named constant.


def _entry(graph, blob: bytes, key: str):
    from torchlight.backends.xnnpack import schema
    entry = schema.table("ConstantDataOffset").ConstantDataOffsetT()
    entry.offset, entry.size, entry.namedKey = NAMED, len(blob), key
    graph.constantData.append(entry)
    return len(graph.constantData) - 1


def _to_main_layout(payload: bytes, named: dict, move_scales: bool) -> bytes:
    """`payload` with every constant moved into `named` (SHA-256 keys, shared
    by equal blobs); with move_scales, per-channel fp32 scales too ("scale_"
    keys, reached through scale_buffer_idx / num_scales)."""
    p = xpayload.parse(payload)
    graph = p.graph
    for index in range(1, len(graph.constantData)):
        blob = p.constant(index)
        key = hashlib.sha256(blob).hexdigest()
        named[key] = blob
        entry = graph.constantData[index]
        entry.offset, entry.size, entry.namedKey = NAMED, len(blob), key
    moved = 0
    if move_scales:
        for value in graph.xvalues:
            quant = getattr(value.xvalueUnion, "quantParams", None)
            if quant is None or not hasattr(quant, "scaleBufferIdx"):
                continue
            if quant.scale is None or len(quant.scale) == 0 or hasattr(quant, "groupSize"):
                continue  # Per-channel only; block-wise keeps its bf16 path.
            blob = struct.pack(f"<{len(quant.scale)}f", *[float(s) for s in quant.scale])
            key = "scale_" + hashlib.sha256(blob).hexdigest()
            named[key] = blob
            quant.scaleBufferIdx = _entry(graph, blob, key)
            quant.numScales = len(quant.scale)
            quant.scale = []
            moved += 1
        assert moved > 0, "no per-channel scales to move"
    return xpayload.serialize(graph, b"")


def _main_layout_program(prog, move_scales=False) -> bytes:
    data = copy.deepcopy(prog._data)
    data.delegate_blobs = [_to_main_layout(b, data.named_data, move_scales)
                           for b in data.delegate_blobs]
    return serialize_pte(data)


def _run(runtime, buffer, inputs):
    return runtime.load(buffer).run("forward", list(inputs))


def test_fp32_conv_net_from_named_data_matches_inline_bit_for_bit(runtime):
    torch.manual_seed(0)
    model = ConvNet().eval()
    x = (torch.randn(2, 3, 9, 9),)
    _, prog = ex._lower(model, x)
    buffer = _main_layout_program(prog)
    pte = read_pte(buffer)
    assert pte.program.named_data, "the constants went to named data"
    for entry in pte.program.named_data:  # Each blob sits in its own segment under its hash.
        assert hashlib.sha256(pte.named_data_bytes(entry.key)).hexdigest() == entry.key
    (inline,) = _run(runtime, prog.buffer, x)
    (named,) = _run(runtime, buffer, x)
    assert torch.equal(named, inline)  # Same XNNPACK on the same bytes.
    with torch.no_grad():
        expected = model(*x)
    ex._close(named, expected)


@pytest.mark.parametrize("rows", [1, 3])
def test_dynamic_int8_linear_with_scales_in_named_data(runtime, rows):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(40, 24), torch.nn.ReLU(), torch.nn.Linear(24, 6))
    x = (torch.randn(rows, 40),)
    quantized = _quantize(model, x, dynamic=True)
    _, prog = ex._lower(quantized, x)
    buffer = _main_layout_program(prog, move_scales=True)
    assert any(e.key.startswith("scale_") for e in read_pte(buffer).program.named_data)
    (inline,) = _run(runtime, prog.buffer, x)
    (named,) = _run(runtime, buffer, x)
    assert torch.equal(named, inline)


def test_missing_named_data_is_a_named_error(runtime):
    torch.manual_seed(0)
    model = ConvNet().eval()
    x = (torch.randn(1, 3, 8, 8),)
    _, prog = ex._lower(model, x)
    data = copy.deepcopy(prog._data)
    data.delegate_blobs = [_to_main_layout(b, data.named_data, False) for b in data.delegate_blobs]
    missing = next(iter(data.named_data))
    del data.named_data[missing]
    with pytest.raises(Exception, match=f"named data '{missing}'"):
        runtime.load(serialize_pte(data)).run("forward", list(x))
