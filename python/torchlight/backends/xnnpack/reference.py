"""A slow reading of XNNPACK payloads in PyTorch, written from the spec
(shared/spec/xnnpack-format.md) and independent of the exporter, for tests:

  check(payload, num_args)  the structural rules a runtime relies on
                            (ids, externals, constants, dims); raises
                            PayloadError naming the broken rule
  run(payload, inputs)      computes the graph's outputs node by node with
                            torch ops, in the layouts the payload states

Every node kind the exporter writes is interpreted; an unknown one is an error.
"""

from __future__ import annotations

import math
from typing import Dict, List, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from torchlight.backends.xnnpack import schema
from torchlight.backends.xnnpack.payload import Payload, PayloadError

INVALID_ID = 0xFFFFFFFF

# XNNDatatype numbers (payload numbering).
FP32, FP16, QINT8, QUINT8, QINT32, QCINT8, QCINT32, QCINT4, QDINT8, QBINT4 = range(1, 11)


def _kinds() -> Dict[int, str]:
    union = schema.table("XNodeUnion").XNodeUnion
    return {v: k for k, v in vars(union).items() if not k.startswith("_") and k != "NONE"}


def _tensor(xvalue):
    """(XNNTensorValueT, quant params or None, quant type) of an XValue."""
    body = xvalue.xvalueUnion
    if hasattr(body, "tensorValue"):
        return body.tensorValue, body.quantParams, body.quantParamsType
    return body, None, 0


def _dims(tensor) -> List[int]:
    return [int(d) for d in (tensor.dims if tensor.dims is not None else [])]


def check(p: Payload, num_args: int) -> None:
    """The rules of spec sections 1-3 for a payload read with `num_args`
    DelegateCall arguments."""
    g = p.graph
    if p.identifier != b"XN01":
        raise PayloadError(f"identifier {p.identifier!r} is not the exporter's XN01")
    if p.flatbuffer_offset != 32 or p.constant_data_offset % 16:
        raise PayloadError("regions are not where release 0.5 puts them (32, 16-aligned)")
    if g.numExterns != num_args:
        raise PayloadError(f"num_externs {g.numExterns} != {num_args} delegate arguments")
    entries = g.constantData or []
    if entries and (entries[0].offset or entries[0].size):
        raise PayloadError("constant_data[0] is not the empty dummy")
    for i, entry in enumerate(entries[1:], 1):
        if entry.offset % 16 or entry.offset + entry.size > p.constant_data_size:
            raise PayloadError(f"constant_data[{i}] is misaligned or outside the region")
    ids, inputs, outputs = set(), [], []
    for index, xvalue in enumerate(g.xvalues):
        tensor, _, _ = _tensor(xvalue)
        if tensor.idOut != index:
            raise PayloadError(f"xvalues[{index}] has id_out {tensor.idOut}")
        dims = _dims(tensor)
        if tensor.numDims != len(dims) or not 1 <= len(dims) <= 6:
            raise PayloadError(f"value {index}: num_dims {tensor.numDims}, dims {dims}")
        if tensor.constantBufferIdx >= max(len(entries), 1):
            raise PayloadError(f"value {index}: constant_buffer_idx {tensor.constantBufferIdx} "
                               f"out of range")
        if tensor.flags not in (0, 1, 2):
            raise PayloadError(f"value {index}: flags {tensor.flags}")
        if tensor.flags:
            if tensor.externalId >= num_args or tensor.constantBufferIdx:
                raise PayloadError(f"value {index}: bad external {tensor.externalId}")
            (inputs if tensor.flags == 1 else outputs).append(tensor.externalId)
        elif tensor.externalId != INVALID_ID:
            raise PayloadError(f"internal value {index} has external_id {tensor.externalId}")
        ids.add(index)
    if sorted(inputs + outputs) != list(range(num_args)):
        raise PayloadError(f"external ids {sorted(inputs + outputs)} do not cover the "
                           f"{num_args} arguments once each")
    if max(inputs, default=-1) > min(outputs, default=num_args):
        raise PayloadError("an output's external id comes before an input's")
    kinds = _kinds()
    defined = {i for i, x in enumerate(g.xvalues) if _tensor(x)[0].flags == 1
               or _tensor(x)[0].constantBufferIdx}
    for n, xnode in enumerate(g.xnodes):
        if xnode.xnodeUnionType not in kinds:
            raise PayloadError(f"xnodes[{n}] has unknown kind {xnode.xnodeUnionType}")
        body = vars(xnode.xnodeUnion)
        for name, value in body.items():
            if not name.endswith("Id") or value == INVALID_ID:
                continue
            if value not in ids:
                raise PayloadError(f"xnodes[{n}].{name} = {value} names no value")
            if name.startswith("output"):
                defined.add(value)
            elif value not in defined:
                raise PayloadError(f"xnodes[{n}] reads value {value} before it is computed")


# --- execution ----------------------------------------------------------------------------------

def unpack_int4(data: bytes, dims: Sequence[int]) -> torch.Tensor:
    """4-bit constants (qcint4/qbint4) as int values in [-8, 7], per spec
    section 3: stored + 8, two per byte along the last dim, element 2k in the
    low nibble, rows padded to even length."""
    rows, cols = int(np.prod(dims[:-1])), dims[-1]
    stride = (cols + 1) // 2
    if len(data) < rows * stride:
        raise PayloadError(f"4-bit constant of {len(data)} bytes; [{rows}, {cols}] needs "
                           f"{rows * stride}")
    packed = np.frombuffer(data, dtype=np.uint8)[:rows * stride].reshape(rows, stride)
    values = np.stack([packed & 0xF, packed >> 4], axis=-1).reshape(rows, 2 * stride)[:, :cols]
    return torch.from_numpy(values.astype(np.int16) - 8).to(torch.int8).reshape(list(dims))


def _constant(p: Payload, tensor, quant, quant_type) -> torch.Tensor:
    data = p.constant(tensor.constantBufferIdx)
    dims = _dims(tensor)
    if tensor.datatype in (QCINT4, QBINT4):
        return _dequantize(unpack_int4(data, dims).to(torch.float32), quant, quant_type)
    dtype = {FP32: np.float32, QINT8: np.int8, QCINT8: np.int8, QINT32: np.int32,
             QCINT32: np.int32, FP16: np.float16}.get(tensor.datatype)
    if dtype is None:
        raise PayloadError(f"constant of datatype {tensor.datatype} is not read here")
    array = np.frombuffer(data, dtype=dtype).copy()
    value = torch.from_numpy(array).reshape(dims)
    return _dequantize(value.to(torch.float32), quant, quant_type) if quant is not None \
        else value.to(torch.float32)


def _dequantize(q: torch.Tensor, quant, quant_type) -> torch.Tensor:
    union = schema.table("XNNQuantParams").XNNQuantParams
    if quant_type == union.PerTensorQuant:
        return (q - quant.zeroPoint) * quant.scale
    if quant_type == union.PerChannelQuant:
        shape = [1] * q.dim()
        shape[quant.channelDim] = -1
        return q * torch.tensor(np.asarray(quant.scale, dtype=np.float32)).reshape(shape)
    if quant_type == union.PerChannelGroupQuant:  # [out, in], scales [out][in / group]
        rows, cols = q.shape
        scales = torch.tensor(np.asarray(quant.scale, dtype=np.float32)).reshape(rows, -1)
        return q * scales.repeat_interleave(quant.groupSize, dim=1)[:, :cols]
    raise PayloadError(f"quantization kind {quant_type} is not read here")


def _quantize(x: torch.Tensor, quant, quant_type) -> torch.Tensor:
    """Round-trips x through the value's quantization (what XNNPACK stores)."""
    union = schema.table("XNNQuantParams").XNNQuantParams
    if quant_type == union.PerTensorQuant:
        q = torch.clamp(torch.round(x / quant.scale) + quant.zeroPoint, -128, 127)
        return (q - quant.zeroPoint) * quant.scale
    if quant_type == union.PerTokenDynamicQuant:
        flat = x.reshape(-1, x.shape[-1])
        lo = torch.clamp(flat.min(dim=1, keepdim=True).values, max=0)
        hi = torch.clamp(flat.max(dim=1, keepdim=True).values, min=0)
        scale = torch.clamp((hi - lo) / 255, min=1e-12)
        zero = torch.clamp(torch.round(-128 - lo / scale), -128, 127)
        q = torch.clamp(torch.round(flat / scale) + zero, -128, 127)
        return ((q - zero) * scale).reshape(x.shape)
    return x


def _nchw(x):
    return x.permute(0, 3, 1, 2)


def _nhwc(x):
    return x.permute(0, 2, 3, 1).contiguous()


def run(p: Payload, inputs: Sequence[torch.Tensor]) -> List[torch.Tensor]:
    """The graph's outputs for `inputs` (the DelegateCall's input arguments)."""
    g = p.graph
    kinds = _kinds()
    values: Dict[int, torch.Tensor] = {}
    quant_of = {}
    outputs = {}
    for index, xvalue in enumerate(g.xvalues):
        tensor, quant, quant_type = _tensor(xvalue)
        if quant is not None:
            quant_of[index] = (quant, quant_type)
        if tensor.flags == 1:
            values[index] = inputs[tensor.externalId].to(torch.float32).reshape(_dims(tensor))
        elif tensor.constantBufferIdx:
            values[index] = _constant(p, tensor, quant, quant_type)
        if tensor.flags == 2:
            outputs[tensor.externalId] = index

    for xnode in g.xnodes:
        kind = kinds[xnode.xnodeUnionType]
        n = xnode.xnodeUnion
        bounds = xnode.outputMinMax
        lo = bounds.outputMin if bounds is not None else -math.inf
        hi = bounds.outputMax if bounds is not None else math.inf
        result = _node(kind, n, values, lo, hi)
        out = getattr(n, "outputId", None)
        if out in quant_of:
            result = _quantize(result, *quant_of[out])
        values[out] = result
    return [values[outputs[k]] for k in sorted(outputs)]


def _node(kind: str, n, v, lo, hi) -> torch.Tensor:
    clamp = lambda x: torch.clamp(x, lo, hi)  # noqa: E731
    unary = {"XNNSigmoid": torch.sigmoid, "XNNTanh": torch.tanh, "XNNAbs": torch.abs,
             "XNNNegate": torch.neg, "XNNFloor": torch.floor, "XNNCeiling": torch.ceil,
             "XNNSquareRoot": torch.sqrt, "XNNSquare": torch.square,
             "XNNHardswish": F.hardswish, "XNNConvert": lambda x: x,
             "XNNSoftmax": lambda x: torch.softmax(x, -1)}
    binary = {"XNNAdd": torch.add, "XNNSubtract": torch.sub, "XNNMultiply": torch.mul,
              "XNNDiv": torch.div, "XNNMinimum": torch.minimum, "XNNMaximum": torch.maximum}
    if kind in unary:
        return unary[kind](v[n.inputId])
    if kind in binary:
        result = binary[kind](v[n.input1Id], v[n.input2Id])
        return clamp(result) if kind in ("XNNAdd", "XNNSubtract", "XNNMultiply", "XNNDiv") \
            else result
    if kind == "XNNClamp":
        return clamp(v[n.inputId])
    if kind == "XNNLeakyReLU":
        return F.leaky_relu(v[n.inputId], n.negativeSlope)
    if kind == "XNNELU":
        return F.elu(v[n.inputId], n.alpha)
    if kind == "XNNFullyConnected":
        w = v[n.filterId]
        w = w.t() if n.flags & 1 else w
        b = v[n.biasId] if n.biasId != INVALID_ID else None
        return clamp(F.linear(v[n.input1Id], w, b))
    if kind == "XNNBatchMatrixMultiply":
        return torch.matmul(v[n.input1Id], v[n.input2Id])
    if kind in ("XNNConv2d", "XNNDepthwiseConv2d", "XNNConvTranspose2d"):
        return clamp(_conv(kind, n, v))
    if kind in ("XNNMaxPooling2d", "XNNAvgPooling2d"):
        x = _nchw(v[n.inputId])
        kernel, stride = (n.poolingHeight, n.poolingWidth), (n.strideHeight, n.strideWidth)
        padding = (n.paddingTop, n.paddingLeft)
        if kind == "XNNMaxPooling2d":
            dilation = (max(n.dilationHeight, 1), max(n.dilationWidth, 1))
            y = F.max_pool2d(x, kernel, stride, padding, dilation)
        else:
            y = F.avg_pool2d(x, kernel, stride, padding, count_include_pad=False)
        return clamp(_nhwc(y))
    if kind == "XNNGlobalAvgPooling2d":
        return clamp(v[n.inputId].mean(dim=(1, 2), keepdim=True))
    if kind == "XNNStaticTranspose":
        return v[n.inputId].permute(*[int(i) for i in n.perm]).contiguous()
    if kind == "XNNStaticReshape":
        return v[n.inputId].reshape([int(i) for i in n.newShape])
    if kind == "XNNStaticSlice":
        x = v[n.inputId]
        for d, (offset, size) in enumerate(zip(n.offsets, n.sizes)):
            x = x.narrow(d, int(offset), int(size))
        return x.contiguous()
    if kind == "XNNStaticConstantPad":
        pads = []
        for pre, post in zip(reversed(list(n.prePaddings)), reversed(list(n.postPaddings))):
            pads += [int(pre), int(post)]
        return F.pad(v[n.inputId], pads, value=n.paddingValue)
    if kind == "XNNStaticResizeBilinear2D":
        y = F.interpolate(_nchw(v[n.inputId]), size=(n.newHeight, n.newWidth), mode="bilinear",
                          align_corners=bool(n.flags & 0x8))
        return _nhwc(y)
    if kind.startswith("XNNConcatenate"):
        ids = [n.input1Id, n.input2Id, n.input3Id, n.input4Id]
        return torch.cat([v[i] for i in ids if i != INVALID_ID], dim=n.axis)
    raise PayloadError(f"node kind {kind} is not interpreted by the reference")


def _conv(kind, n, v) -> torch.Tensor:
    x = _nchw(v[n.input1Id])
    w = v[n.filterId]
    b = v[n.biasId] if n.biasId != INVALID_ID else None
    stride = (n.subsamplingHeight, n.subsamplingWidth)
    dilation = (max(n.dilationHeight, 1), max(n.dilationWidth, 1))
    if (n.paddingTop, n.paddingLeft) != (n.paddingBottom, n.paddingRight):
        x = F.pad(x, (n.paddingLeft, n.paddingRight, n.paddingTop, n.paddingBottom))
        padding = (0, 0)
    else:
        padding = (n.paddingTop, n.paddingLeft)
    if kind == "XNNDepthwiseConv2d":
        weight = w.permute(3, 0, 1, 2)  # [1, kh, kw, oc] -> [oc, 1, kh, kw]
        y = F.conv2d(x, weight, b, stride, padding, dilation, n.groups)
    elif kind == "XNNConv2d":
        y = F.conv2d(x, w.permute(0, 3, 1, 2), b, stride, padding, dilation, n.groups)
    else:
        oc, kh, kw, icg = w.shape
        g = n.groups
        weight = w.reshape(g, oc // g, kh, kw, icg).permute(0, 4, 1, 2, 3).reshape(
            g * icg, oc // g, kh, kw)
        y = F.conv_transpose2d(x, weight, b, stride, padding,
                               (n.adjustmentHeight, n.adjustmentWidth), g, dilation)
    return _nhwc(y)
