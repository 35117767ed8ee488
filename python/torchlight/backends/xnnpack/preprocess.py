"""XnnpackBackend.preprocess: one partition's graph -> upstream's payload
(XH00 header, XN01 flatbuffer, constant region; spec sections 1-4).

Values are numbered in the order they are first needed (inputs first), as
upstream's serializer does. 4-D tensors that convolution, pooling, mean over
H/W or bilinear resizing read run in NHWC: such a tensor's `dims` are
written permuted by [0, 2, 3, 1], element-wise operators keep whatever
layout their inputs have, and an XNNStaticTranspose converts where a
consumer needs the other layout (at the latest at the partition's outputs,
which, like its inputs, stay NCHW-contiguous).
"""

from __future__ import annotations

import copy
import math
import operator
import struct
from typing import Dict, List, Optional, Sequence, Tuple

import torch
import torch.fx

from torchlight.backends.xnnpack import payload, quant, schema, support
from torchlight.delegation import BackendDetails, CompileSpec, PreprocessResult, register_backend
from torchlight.errors import node_error

BACKEND_ID = "XnnpackBackend"

aten = torch.ops.aten

INVALID_ID = 0xFFFFFFFF
FLAG_EXTERNAL_INPUT = 1
FLAG_EXTERNAL_OUTPUT = 2
FLAG_TRANSPOSE_WEIGHTS = 0x1
FLAG_ALIGN_CORNERS = 0x8
FLAG_KEEP_DIMS = 0x40

NCHW, NHWC = "nchw", "nhwc"
TO_NHWC = (0, 2, 3, 1)  # physical NHWC dim j holds logical NCHW dim TO_NHWC[j]
TO_NCHW = (0, 3, 1, 2)  # logical NCHW dim d sits at physical NHWC position TO_NCHW[d]

# XNNDatatype numbers (the payload's numbering).
FP32, QINT8, QINT32, QCINT8, QCINT32, QCINT4, QDINT8, QBINT4 = 1, 3, 5, 6, 7, 8, 9, 10

_UNARY_KINDS = {
    aten.sigmoid.default: "XNNSigmoid", aten.tanh.default: "XNNTanh",
    aten.hardswish.default: "XNNHardswish", aten.abs.default: "XNNAbs",
    aten.neg.default: "XNNNegate", aten.floor.default: "XNNFloor",
    aten.ceil.default: "XNNCeiling", aten.sqrt.default: "XNNSquareRoot",
    aten.square.default: "XNNSquare", aten.pow.Tensor_Scalar: "XNNSquare",
}
_BINARY_KINDS = {
    aten.add.Tensor: "XNNAdd", aten.add.Scalar: "XNNAdd", aten.sub.Tensor: "XNNSubtract",
    aten.sub.Scalar: "XNNSubtract", aten.mul.Tensor: "XNNMultiply",
    aten.mul.Scalar: "XNNMultiply", aten.div.Tensor: "XNNDiv", aten.div.Scalar: "XNNDiv",
    aten.minimum.default: "XNNMinimum", aten.maximum.default: "XNNMaximum",
}
_CLAMPS = {aten.relu.default, aten.hardtanh.default, aten.clamp.default}
# Producers whose XNNPACK node applies output_min/max itself, so a following
# relu/hardtanh/clamp folds into them.
_TAKES_MIN_MAX = {aten.convolution.default, aten.linear.default, aten.addmm.default,
                  aten.mm.default, aten.add.Tensor, aten.add.Scalar, aten.sub.Tensor,
                  aten.sub.Scalar, aten.mul.Tensor, aten.mul.Scalar}
_RESHAPES = {aten.view.default, aten.view_copy.default, aten.reshape.default,
             aten._unsafe_view.default, aten.squeeze.dim, aten.squeeze.dims,
             aten.squeeze_copy.dims, aten.unsqueeze.default, aten.unsqueeze_copy.default}
_PERMUTES = {aten.permute.default, aten.permute_copy.default, aten.t.default, aten.t_copy.default,
             aten.transpose.int, aten.transpose_copy.int}
_IDENTITIES = {aten.clone.default, aten.alias.default, aten.alias_copy.default}
_NHWC_INPUT = {aten.convolution.default, aten.max_pool2d.default,
               aten.max_pool2d_with_indices.default, aten.avg_pool2d.default,
               aten._adaptive_avg_pool2d.default, aten.adaptive_avg_pool2d.default, aten.mean.dim,
               aten.upsample_bilinear2d.vec, aten.upsample_bilinear2d.default}


def _sizes(node: torch.fx.Node):
    val = node.meta["val"]
    if isinstance(val, (tuple, list)):  # max_pool2d_with_indices: (values, indices)
        val = val[0]
    return list(val.shape)


def _shape(node: torch.fx.Node) -> List[int]:
    """The node's shape, a dynamic dim as its upper bound (spec section 3:
    the runtime reshapes to the actual sizes on every call)."""
    dims = []
    for i, size in enumerate(_sizes(node)):
        bound = support.upper_bound(size)
        if bound is None:
            raise node_error(node, f"dim {i} ({size}) is dynamic with no upper bound; the "
                                   f"XNNPACK delegate needs one")
        dims.append(bound)
    return dims


def _reshape_target(node: torch.fx.Node) -> List[int]:
    """A reshape's new_shape: static sizes, 0 for the (single) dynamic dim,
    which XNNPACK infers from the input's actual size."""
    sizes = _sizes(node)
    if sum(1 for s in sizes if support.is_dynamic(s)) > 1:
        raise node_error(node, "reshapes to more than one dynamic dim; XNNPACK infers one")
    return [0 if support.is_dynamic(s) else int(s) for s in sizes] or [1]


def _perm(dims: Sequence[int], order: Sequence[int]) -> List[int]:
    return [dims[i] for i in order]


def _pairs(values, n=2) -> List[int]:
    values = list(values)
    return values * n if len(values) == 1 else values


def _clamp_bounds(node: torch.fx.Node) -> Tuple[float, float]:
    if node.target is aten.relu.default:
        return 0.0, math.inf
    if node.target is aten.hardtanh.default:
        lo = node.args[1] if len(node.args) > 1 else node.kwargs.get("min_val", -1.0)
        hi = node.args[2] if len(node.args) > 2 else node.kwargs.get("max_val", 1.0)
        return float(lo), float(hi)
    lo = node.args[1] if len(node.args) > 1 else node.kwargs.get("min")
    hi = node.args[2] if len(node.args) > 2 else node.kwargs.get("max")
    return (-math.inf if lo is None else float(lo)), (math.inf if hi is None else float(hi))


# --- graph clean-up before serializing ----------------------------------------------------------

def _attr(gm: torch.fx.GraphModule, name: str, tensor: torch.Tensor, like: torch.fx.Node,
          before: torch.fx.Node) -> torch.fx.Node:
    gm.register_buffer(name, tensor)
    with gm.graph.inserting_before(before):
        node = gm.graph.get_attr(name)
    node.meta["val"] = tensor
    return node


def fold_batch_norms(gm: torch.fx.GraphModule) -> None:
    """conv -> batch norm (inference) becomes one conv with scaled weights."""
    for bn in list(gm.graph.nodes):
        if bn.target is not aten._native_batch_norm_legit_no_training.default:
            continue
        conv = bn.args[0]
        weight, bias, mean, var = (_constant(gm, a) for a in bn.args[1:5])
        eps = bn.args[6]
        scale = weight / torch.sqrt(var + eps)
        w = _constant(gm, conv.args[1])
        b = _constant(gm, conv.args[2]) if conv.args[2] is not None else torch.zeros_like(mean)
        fused_w = (w * scale.reshape(-1, *([1] * (w.dim() - 1)))).contiguous()
        fused_b = ((b - mean) * scale + bias).contiguous()
        args = list(conv.args)
        args[1] = _attr(gm, f"{conv.name}_bn_weight", fused_w, conv.args[1], conv)
        args[2] = _attr(gm, f"{conv.name}_bn_bias", fused_b, conv.args[1], conv)
        conv.args = tuple(args)
        for user in list(bn.users):
            user.replace_all_uses_with(conv)
            gm.graph.erase_node(user)
        gm.graph.erase_node(bn)
    gm.graph.eliminate_dead_code()


def _constant(gm: torch.fx.GraphModule, node) -> torch.Tensor:
    """The value of a constant node: a get_attr, or a view of one."""
    if node.op == "get_attr":
        return getattr(gm, node.target).detach()
    if node.op == "call_function" and node.args and isinstance(node.args[0], torch.fx.Node):
        args = [_constant(gm, a) if isinstance(a, torch.fx.Node) else a for a in node.args]
        return node.target(*args, **node.kwargs)
    raise node_error(node, "is not a constant the XNNPACK delegate can pack")


def _is_constant(node) -> bool:
    if not isinstance(node, torch.fx.Node):
        return False
    if node.op == "get_attr":
        return True
    return node.op == "call_function" and bool(node.args) and \
        (node.target in _FOLDABLE or node.target in quant.DEQUANTIZE) and \
        _is_constant(node.args[0])


_FOLDABLE = _RESHAPES | _PERMUTES


# --- the serializer -----------------------------------------------------------------------------

class _Serializer:
    def __init__(self, gm: torch.fx.GraphModule):
        self.gm = gm
        self.fb = schema.load()
        self.T = lambda name: getattr(schema.table(name), name + "T")
        self.union = schema.table("XNodeUnion").XNodeUnion
        self.xvalues: List[object] = []
        self.tensors: List[object] = []  # XNNTensorValueT of each value, by id
        self.xnodes: List[object] = []
        self.constant_blobs: List[bytes] = []
        self.values: Dict[torch.fx.Node, Tuple[int, str]] = {}
        self.converted: Dict[Tuple[int, str], int] = {}
        self.constant_ids: Dict[Tuple[str, str], int] = {}
        self.fused: Dict[torch.fx.Node, torch.fx.Node] = {}  # activation -> producer
        self.quant: Dict[int, tuple] = {}  # value id -> (kind, params) of quantized values
        self.float_of: Dict[int, int] = {}  # qint8 value id -> its fp32 conversion
        self.debug_handle = 0

    # values ------------------------------------------------------------------------------------
    def new_value(self, dims: Sequence[int], data: Optional[bytes] = None,
                  external_id: int = INVALID_ID, flags: int = 0, datatype: int = FP32,
                  quant_params=None) -> int:
        """A new value; `quant_params` is (XNNQuantParams member name, table)."""
        value_id = len(self.xvalues)
        tensor = self.T("XNNTensorValue")()
        tensor.datatype = datatype
        tensor.numDims = len(dims)
        tensor.dims = [int(d) for d in dims] or [1]
        tensor.numDims = len(tensor.dims)
        tensor.constantBufferIdx = 0
        if data is not None:
            self.constant_blobs.append(data)
            tensor.constantBufferIdx = len(self.constant_blobs)
        tensor.externalId = external_id
        tensor.flags = flags
        tensor.idOut = value_id
        xvalue = self.T("XValue")()
        unions = schema.table("XValueUnion").XValueUnion
        if quant_params is None:
            xvalue.xvalueUnionType = unions.XNNTensorValue
            xvalue.xvalueUnion = tensor
        else:
            quantized = self.T("XNNQuantizedTensorValue")()
            quantized.tensorValue = tensor
            kind, params = quant_params
            quantized.quantParamsType = getattr(schema.table("XNNQuantParams").XNNQuantParams,
                                                kind)
            quantized.quantParams = params
            xvalue.xvalueUnionType = unions.XNNQuantizedTensorValue
            xvalue.xvalueUnion = quantized
            self.quant[value_id] = quant_params
        self.xvalues.append(xvalue)
        self.tensors.append(tensor)
        return value_id

    def constant(self, tensor: torch.Tensor, key: Optional[Tuple[str, str]] = None) -> int:
        """A constant fp32 value with `tensor`'s shape and row-major data."""
        if key is not None and key in self.constant_ids:
            return self.constant_ids[key]
        tensor = tensor.detach().to(torch.float32).contiguous()
        value_id = self.new_value(list(tensor.shape), tensor.numpy().tobytes())
        if key is not None:
            self.constant_ids[key] = value_id
        return value_id

    def scalar(self, number: float) -> int:
        return self.constant(torch.tensor([float(number)]), ("scalar", repr(float(number))))

    def layout(self, node: torch.fx.Node) -> str:
        return self.values[node][1] if node in self.values else NCHW

    def per_tensor(self, scale: float, zero_point: int):
        params = self.T("PerTensorQuant")()
        params.scale, params.zeroPoint = float(scale), int(zero_point)
        return "PerTensorQuant", params

    def per_channel(self, scales: torch.Tensor, channel_dim: int):
        params = self.T("PerChannelQuant")()
        params.scale = [float(v) for v in scales.to(torch.float32).reshape(-1)]
        params.channelDim = channel_dim
        return "PerChannelQuant", params

    def to_float(self, value_id: int) -> int:
        """An fp32 copy (XNNConvert) of a quantized value."""
        if value_id not in self.float_of:
            out = self.new_value(list(self.tensors[value_id].dims))
            self.emit("XNNConvert", "_XNNNode1x1", inputId=value_id, outputId=out, flags=0)
            self.float_of[value_id] = out
        return self.float_of[value_id]

    def quantized(self, node) -> bool:
        """Whether `node` reads as a static qint8 value (a dequantize of one)."""
        return isinstance(node, torch.fx.Node) and node in self.values and \
            self.values[node][0] in self.quant and \
            self.quant[self.values[node][0]][0] == "PerTensorQuant"

    def value(self, node, layout: str = NCHW, keep_quantized: bool = False) -> int:
        """The id of `node`'s value in `layout` (NHWC only means something for 4-D);
        fp32 unless keep_quantized."""
        if not isinstance(node, torch.fx.Node):
            return self.scalar(node)
        if node in self.values and not keep_quantized and self.values[node][0] in self.quant:
            value_id, have = self.values[node]
            converted = self.to_float(value_id)
            return self._relayout_cached(node, converted, have, layout)
        if node not in self.values and _is_constant(node):
            tensor = _constant(self.gm, node)
            if layout == NHWC and tensor.dim() == 4:
                return self.constant(tensor.permute(TO_NHWC), (node.name, NHWC))
            return self.constant(tensor, (node.name, NCHW))
        value_id, have = self.values[node]
        return self._relayout_cached(node, value_id, have, layout)

    def _relayout_cached(self, node, value_id: int, have: str, layout: str) -> int:
        if have == layout or len(_shape(node)) != 4:
            return value_id
        key = (value_id, layout)
        if key not in self.converted:
            self.converted[key] = self.relayout(value_id, _shape(node), have, layout)
        return self.converted[key]

    def relayout(self, value_id: int, nchw_dims: List[int], have: str, want: str) -> int:
        """A new value holding `value_id` permuted from layout `have` to `want`."""
        nhwc_dims = _perm(nchw_dims, TO_NHWC)
        src, dst = (nchw_dims, nhwc_dims) if want == NHWC else (nhwc_dims, nchw_dims)
        perm = TO_NHWC if want == NHWC else TO_NCHW
        source = self.tensors[value_id]
        out = self.new_value(dst, datatype=source.datatype,
                             quant_params=self.quant.get(value_id))
        if [d for d in src if d != 1] == [d for d in dst if d != 1] and \
                [i for i in perm if src[i] != 1] == sorted(i for i in perm if src[i] != 1):
            # Only size-1 dims move: the bytes are already in order.
            self.emit("XNNStaticReshape", "XNNStaticReshape", numDims=len(dst), newShape=dst,
                      inputId=value_id, outputId=out, flags=0)
        else:
            self.emit("XNNStaticTranspose", "XNNStaticTranspose", numDims=4, perm=list(perm),
                      inputId=value_id, outputId=out, flags=0)
        return out

    def define(self, node: torch.fx.Node, layout: str = NCHW, datatype: int = FP32,
               quant_params=None) -> int:
        """A new internal value for `node`'s result, in `layout`."""
        dims = _shape(node)
        if layout == NHWC:
            dims = _perm(dims, TO_NHWC)
        value_id = self.new_value(dims, datatype=datatype, quant_params=quant_params)
        self.values[node] = (value_id, layout)
        return value_id

    # nodes -------------------------------------------------------------------------------------
    def emit(self, kind: str, table: str, min_max: Optional[Tuple[float, float]] = None,
             **fields) -> None:
        body = self.T(table)()
        for name, value in fields.items():
            if not hasattr(body, name):
                raise AttributeError(f"{table} has no field {name}")
            setattr(body, name, value)
        xnode = self.T("XNode")()
        xnode.xnodeUnionType = getattr(self.union, kind)
        xnode.xnodeUnion = body
        xnode.debugHandle = self.debug_handle
        if min_max is not None and min_max != (-math.inf, math.inf):
            bounds = self.T("OutputMinMax")()
            bounds.outputMin, bounds.outputMax = min_max
            xnode.outputMinMax = bounds
        self.xnodes.append(xnode)

    def fusable_activation(self, node: torch.fx.Node) -> Optional[torch.fx.Node]:
        if node.target not in _TAKES_MIN_MAX or len(node.users) != 1:
            return None
        (user,) = node.users
        if user.target in _CLAMPS and user.args[0] is node:
            return user
        return None

    def output_of(self, node: torch.fx.Node, layout: str = NCHW, requantize=None):
        """(output id, min/max) for `node`, folding a following clamp. With
        `requantize` (the quantize node the result goes to), the output is
        that node's qint8 value."""
        activation = self.fusable_activation(node)
        if requantize is not None:
            scale, zero_point = requantize.args[1:3]
            out = self.define(requantize, layout, QINT8, self.per_tensor(scale, zero_point))
            self.fused[requantize] = node
        else:
            out = self.define(node, layout)
        if activation is None:
            return out, None
        self.fused[activation] = node
        if requantize is None:
            self.values[activation] = self.values[node]
        return out, _clamp_bounds(activation)

    def requantize_of(self, node: torch.fx.Node, inputs) -> Optional[torch.fx.Node]:
        """The static quantize node `node`'s result goes to (maybe through a
        clamp), if all of `inputs` are static qint8 values: then `node` runs
        quantized."""
        if not inputs or not all(self.quantized(i) for i in inputs):
            return None
        last = self.fusable_activation(node) or node
        if len(last.users) != 1:
            return None
        (user,) = last.users
        return user if user.target in quant.STATIC_QUANTIZE else None

    def requantize_same(self, node: torch.fx.Node) -> Optional[torch.fx.Node]:
        """The static quantize a clamp's result goes to, if the clamp reads a
        static qint8 value with that quantize's scale and zero point (pt2e
        gives relu6 its input's observer): then dq -> clamp -> q is a clamp
        of the qint8 values themselves."""
        x = node.args[0]
        if not self.quantized(x) or len(node.users) != 1:
            return None
        (user,) = node.users
        if user.target not in quant.STATIC_QUANTIZE or user.args[0] is not node:
            return None
        have = self.quant[self.values[x][0]][1]
        scale, zero_point = user.args[1:3]
        if not isinstance(scale, (int, float)) or not isinstance(zero_point, int):
            return None
        return user if float(scale) == have.scale and zero_point == have.zeroPoint else None

    # operators ---------------------------------------------------------------------------------
    def lower(self, node: torch.fx.Node) -> None:
        target = node.target
        if node in self.fused or _is_constant(node):
            return  # Folded into its producer / into the constant its reader packs.
        if target in quant.STATIC_QUANTIZE:
            layout = self.layout(node.args[0])
            x = self.value(node.args[0], layout)
            self.emit("XNNConvert", "_XNNNode1x1", inputId=x,
                      outputId=self.define(node, layout, QINT8, self.per_tensor(*node.args[1:3])),
                      flags=0)
        elif target in quant.STATIC_DEQUANTIZE:
            self.values[node] = self.values[node.args[0]]
        elif target in quant.CHOOSE_QPARAMS + quant.DYNAMIC_QUANTIZE + quant.DYNAMIC_DEQUANTIZE \
                + quant.PER_TOKEN or (target is operator.getitem and node.args[0].target in
                                      quant.CHOOSE_QPARAMS + quant.CHOOSE_QPARAMS_PER_TOKEN):
            return  # The dynamic pattern: its linear converts its input itself.
        elif target in _IDENTITIES or target is operator.getitem:
            self.values[node] = self.values[node.args[0]]
        elif target in _CLAMPS and self.requantize_same(node) is not None:
            # dq -> clamp -> q with one scale and zero point: a qint8 clamp,
            # which XNNPACK folds into the node writing its input (a
            # convolution's output range), instead of two converts and a
            # float clamp over the whole tensor.
            requantize = self.requantize_same(node)
            layout = self.layout(node.args[0])
            x = self.value(node.args[0], layout, keep_quantized=True)
            out = self.define(requantize, layout, QINT8, self.per_tensor(*requantize.args[1:3]))
            self.fused[requantize] = node
            self.emit("XNNClamp", "_XNNNode1x1", _clamp_bounds(node), inputId=x, outputId=out,
                      flags=0)
        elif target in _CLAMPS:
            layout = self.layout(node.args[0])
            x = self.value(node.args[0], layout)
            self.emit("XNNClamp", "_XNNNode1x1", _clamp_bounds(node), inputId=x,
                      outputId=self.define(node, layout), flags=0)
        elif target in _UNARY_KINDS:
            layout = self.layout(node.args[0])
            x = self.value(node.args[0], layout)
            self.emit(_UNARY_KINDS[target], "_XNNNode1x1", inputId=x,
                      outputId=self.define(node, layout), flags=0)
        elif target is aten.leaky_relu.default:
            layout = self.layout(node.args[0])
            x = self.value(node.args[0], layout)
            slope = node.args[1] if len(node.args) > 1 else 0.01
            self.emit("XNNLeakyReLU", "XNNLeakyReLU", negativeSlope=float(slope), inputId=x,
                      outputId=self.define(node, layout), flags=0)
        elif target is aten.elu.default:
            layout = self.layout(node.args[0])
            x = self.value(node.args[0], layout)
            alpha = node.args[1] if len(node.args) > 1 else 1.0
            self.emit("XNNELU", "XNNELU", alpha=float(alpha), inputId=x,
                      outputId=self.define(node, layout), flags=0)
        elif target in _BINARY_KINDS:
            self.lower_binary(node)
        elif target in (aten._softmax.default, aten.softmax.int):
            x = self.value(node.args[0])
            self.emit("XNNSoftmax", "_XNNNode1x1", inputId=x, outputId=self.define(node),
                      flags=0)
        elif target in (aten.linear.default, aten.addmm.default, aten.mm.default):
            self.lower_fully_connected(node)
        elif target is aten.bmm.default:
            a, b = self.value(node.args[0]), self.value(node.args[1])
            self.emit("XNNBatchMatrixMultiply", "_XNNNode2x1", input1Id=a, input2Id=b,
                      outputId=self.define(node), flags=0)
        elif target is aten.convolution.default:
            self.lower_convolution(node)
        elif target in (aten.max_pool2d.default, aten.max_pool2d_with_indices.default):
            self.lower_pool(node, "XNNMaxPooling2d")
        elif target is aten.avg_pool2d.default:
            self.lower_pool(node, "XNNAvgPooling2d")
        elif target in (aten.mean.dim, aten._adaptive_avg_pool2d.default,
                        aten.adaptive_avg_pool2d.default):
            x = self.value(node.args[0], NHWC)
            self.emit("XNNGlobalAvgPooling2d", "_XNNNode1x1", inputId=x,
                      outputId=self.define(node, NHWC), flags=FLAG_KEEP_DIMS)
        elif target in (aten.upsample_bilinear2d.vec, aten.upsample_bilinear2d.default):
            x = self.value(node.args[0], NHWC)
            _, _, height, width = _shape(node)
            align = bool(node.args[2]) if len(node.args) > 2 else False
            self.emit("XNNStaticResizeBilinear2D", "XNNStaticResizeBilinear2D", newHeight=height,
                      newWidth=width, inputId=x, outputId=self.define(node, NHWC),
                      flags=FLAG_ALIGN_CORNERS if align else 0)
        elif target is aten.cat.default:
            self.lower_cat(node)
        elif target in _RESHAPES:
            x = self.value(node.args[0])
            shape = _reshape_target(node)
            self.emit("XNNStaticReshape", "XNNStaticReshape", numDims=len(shape),
                      newShape=shape, inputId=x, outputId=self.define(node), flags=0)
        elif target in _PERMUTES:
            self.lower_permute(node)
        elif target in (aten.slice.Tensor, aten.slice_copy.Tensor):
            self.lower_slice(node)
        elif target is aten.constant_pad_nd.default:
            self.lower_pad(node)
        else:
            raise node_error(node, "has no XNNPACK lowering")

    def lower_binary(self, node: torch.fx.Node) -> None:
        operands = list(node.args[:2])
        tensors = [a for a in operands if isinstance(a, torch.fx.Node)]
        four_d = all(len(_shape(a)) == 4 for a in tensors) and len(_shape(node)) == 4
        layout = NHWC if four_d and any(self.layout(a) == NHWC for a in tensors
                                        if a in self.values) else NCHW
        requantize = None
        if node.target in (aten.add.Tensor, aten.sub.Tensor, aten.mul.Tensor) and \
                len(tensors) == 2:
            requantize = self.requantize_of(node, tensors)
        a, b = (self.value(x, layout, keep_quantized=requantize is not None) for x in operands)
        out, min_max = self.output_of(node, layout, requantize)
        self.emit(_BINARY_KINDS[node.target], "_XNNNode2x1", min_max, input1Id=a, input2Id=b,
                  outputId=out, flags=0)

    def lower_fully_connected(self, node: torch.fx.Node) -> None:
        if node.target is aten.linear.default:
            x, weight = node.args[0], node.args[1]
            bias = node.args[2] if len(node.args) > 2 else None
            w = _constant(self.gm, weight)
        else:
            if node.target is aten.addmm.default:
                bias, x, weight = node.args[:3]
            else:
                bias, (x, weight) = None, node.args[:2]
            w = _constant(self.gm, weight).t()  # mat2 is [in, out]; store [out, in]
        if quant.is_qdq(weight) and weight.target in quant.DEQUANTIZE:
            if _is_dynamic(x):
                return self.lower_dynamic_linear(node, x.args[0].args[0], weight, bias)
            source = quant.per_token_source(x)
            if source is not None:
                return self.lower_dynamic_linear(node, source, weight, bias)
            requantize = self.requantize_of(node, [x])
            if requantize is not None:
                return self.lower_quantized(node, x, weight, bias, requantize, "fc")
        x_id = self.value(x)
        filter_id = self.constant(w, (weight.name, "fc"))
        bias_id = INVALID_ID if bias is None else self.value(bias)
        out, min_max = self.output_of(node)
        self.emit("XNNFullyConnected", "XNNFullyConnected", min_max, input1Id=x_id,
                  filterId=filter_id, biasId=bias_id, outputId=out, flags=0)

    def lower_convolution(self, node: torch.fx.Node) -> None:
        x, weight, bias, stride, padding, dilation, transposed, output_padding, groups = \
            node.args
        if not transposed and quant.is_qdq(weight) and weight.target in quant.DEQUANTIZE:
            requantize = self.requantize_of(node, [x])
            if requantize is not None:
                return self.lower_quantized(node, x, weight, bias, requantize, "conv")
        w = _constant(self.gm, weight)
        stride, padding, dilation = _pairs(stride), _pairs(padding), _pairs(dilation)
        x_id = self.value(x, NHWC)
        if transposed:
            ic, ocg, kh, kw = w.shape
            icg = ic // groups
            ocs = ocg * groups
            w = w.reshape(groups, icg, ocg, kh, kw).permute(0, 2, 3, 4, 1).reshape(
                ocs, kh, kw, icg)
            kind, adjust = "XNNConvTranspose2d", _pairs(output_padding)
            group_in, group_out = icg, ocg
        else:
            oc, icg, kh, kw = w.shape
            group_in, group_out, adjust = icg, oc // groups, [0, 0]
            if groups > 1 and icg == 1:
                kind = "XNNDepthwiseConv2d"
                w = w.permute(1, 2, 3, 0)  # [1, kh, kw, oc]
            else:
                kind = "XNNConv2d"
                w = w.permute(0, 2, 3, 1)  # [oc, kh, kw, ic/groups]
        filter_id = self.constant(w, (weight.name, kind))
        bias_id = INVALID_ID if bias is None else self.value(bias)
        out, min_max = self.output_of(node, NHWC)
        self.emit(kind, "_XNNNodeConv", min_max, paddingTop=padding[0], paddingRight=padding[1],
                  paddingBottom=padding[0], paddingLeft=padding[1], kernelHeight=kh,
                  kernelWidth=kw, subsamplingHeight=stride[0], subsamplingWidth=stride[1],
                  dilationHeight=dilation[0], dilationWidth=dilation[1],
                  groupInputChannels=group_in, groupOutputChannels=group_out, groups=groups,
                  adjustmentHeight=adjust[0], adjustmentWidth=adjust[1], input1Id=x_id,
                  filterId=filter_id, biasId=bias_id, outputId=out, flags=0)

    def quantized_weight(self, weight: torch.fx.Node, layout: str):
        """(int8 weights in XNNPACK's layout, scales per output channel or a
        single scale, channel dim, kind) of a dequantized constant weight."""
        w = _constant(self.gm, weight.args[0])
        zero_points = weight.args[2]
        if isinstance(zero_points, torch.fx.Node):
            zero_points = _constant(self.gm, zero_points)
        if torch.any(torch.as_tensor(zero_points) != 0):
            raise node_error(weight, "weights with non-zero zero points are not supported "
                                     "by XNNPACK")
        per_channel = weight.target in quant.DEQUANTIZE_PER_CHANNEL
        if per_channel and weight.args[3] != 0:
            raise node_error(weight, "per-channel weights must be quantized along dim 0")
        scales = weight.args[1]
        if isinstance(scales, torch.fx.Node):
            scales = _constant(self.gm, scales)
        scales = torch.as_tensor(scales, dtype=torch.float64).reshape(-1)
        return w, scales, per_channel

    def lower_quantized(self, node, x, weight, bias, requantize, what: str) -> None:
        """qs8 convolution / fully-connected: qint8 input and output, int8
        weights (per tensor or per output channel), int32 bias."""
        w, w_scales, per_channel = self.quantized_weight(weight, NCHW)
        x_scale = self.quant[self.values[x][0]][1].scale
        layout = NHWC if what == "conv" else NCHW
        x_id = self.value(x, layout, keep_quantized=True)
        if what == "conv":
            _, _, stride, padding, dilation, _, _, groups = node.args[1:]
            oc, icg, kh, kw = w.shape
            depthwise = groups > 1 and icg == 1
            kind = "XNNDepthwiseConv2d" if depthwise else "XNNConv2d"
            w = w.permute(1, 2, 3, 0) if depthwise else w.permute(0, 2, 3, 1)
            channel_dim = 3 if depthwise else 0
        else:
            oc, channel_dim = w.shape[0], 0
        w = w.contiguous().to(torch.int8)
        if per_channel:
            filter_quant = self.per_channel(w_scales, channel_dim)
            filter_type = QCINT8
        else:
            filter_quant = self.per_tensor(float(w_scales[0]), 0)
            filter_type = QINT8
        filter_id = self.new_value(list(w.shape), w.numpy().tobytes(), datatype=filter_type,
                                   quant_params=filter_quant)
        bias_id = INVALID_ID
        if bias is not None:
            b = _constant(self.gm, bias).to(torch.float64).reshape(-1)
            bias_scales = x_scale * w_scales.expand(oc) if per_channel \
                else torch.full((oc,), x_scale * float(w_scales[0]), dtype=torch.float64)
            b_q = torch.round(b / bias_scales).clamp(-2 ** 31, 2 ** 31 - 1).to(torch.int32)
            if per_channel:
                bias_quant, bias_type = self.per_channel(bias_scales, 0), QCINT32
            else:
                bias_quant, bias_type = self.per_tensor(float(bias_scales[0]), 0), QINT32
            bias_id = self.new_value([oc], b_q.numpy().tobytes(), datatype=bias_type,
                                     quant_params=bias_quant)
        out, min_max = self.output_of(node, layout, requantize)
        if what == "fc":
            self.emit("XNNFullyConnected", "XNNFullyConnected", min_max, input1Id=x_id,
                      filterId=filter_id, biasId=bias_id, outputId=out, flags=0)
            return
        stride, padding, dilation = _pairs(stride), _pairs(padding), _pairs(dilation)
        self.emit(kind, "_XNNNodeConv", min_max, paddingTop=padding[0], paddingRight=padding[1],
                  paddingBottom=padding[0], paddingLeft=padding[1], kernelHeight=kh,
                  kernelWidth=kw, subsamplingHeight=stride[0], subsamplingWidth=stride[1],
                  dilationHeight=dilation[0], dilationWidth=dilation[1],
                  groupInputChannels=icg, groupOutputChannels=oc // groups, groups=groups,
                  adjustmentHeight=0, adjustmentWidth=0, input1Id=x_id, filterId=filter_id,
                  biasId=bias_id, outputId=out, flags=0)

    def dynamic_input(self, source: torch.fx.Node) -> int:
        """`source` (fp32) converted to qdint8, quantized per row by XNNPACK
        at run time (one convert per source, shared by its linears)."""
        key = (self.value(source), "qd8")
        if key not in self.converted:
            dynamic = self.T("PerTokenDynamicQuant")()
            dynamic.numNonbatchDims = 1
            qd = self.new_value(_shape(source), datatype=QDINT8,
                                quant_params=("PerTokenDynamicQuant", dynamic))
            self.emit("XNNConvert", "_XNNNode1x1", inputId=key[0], outputId=qd, flags=0)
            self.converted[key] = qd
        return self.converted[key]

    def dynamic_filter(self, weight: torch.fx.Node) -> int:
        """The filter of a qd8 fully-connected: qc8w (int8 per channel), qc4w
        (4-bit per channel) or qb4w (4-bit per block of `group` inputs)."""
        kind, reason = quant.weight_kind(weight, _ConstantValues(self.gm))
        if reason:
            raise node_error(weight, f"cannot be an XNNPACK weight: {reason}")
        w = _constant(self.gm, weight.args[0]).to(torch.int8).contiguous()
        scales = _constant(self.gm, weight.args[1]).to(torch.float32)
        rows = w.shape[0]
        if kind == "qc8w":
            scales = scales.reshape(-1).expand(rows) if scales.numel() == 1 else scales
            return self.new_value(list(w.shape), w.numpy().tobytes(), datatype=QCINT8,
                                  quant_params=self.per_channel(scales.reshape(-1), 0))
        data = pack_int4(w)
        if kind == "qc4w":
            scales = scales.reshape(-1).expand(rows) if scales.numel() == 1 else scales
            return self.new_value(list(w.shape), data, datatype=QCINT4,
                                  quant_params=self.per_channel(scales.reshape(-1), 0))
        params = self.T("PerChannelGroupQuant")()
        params.scale = [float(v) for v in scales.reshape(-1)]  # [out][in / group], row-major
        params.channelDim = 0
        params.groupSize = int(weight.args[6] if len(weight.args) > 6
                               else weight.kwargs["group_size"])
        return self.new_value(list(w.shape), data, datatype=QBINT4,
                              quant_params=("PerChannelGroupQuant", params))

    def lower_dynamic_linear(self, node, source, weight, bias) -> None:
        """qd8-f32-{qc8w,qc4w,qb4w}: fp32 input -> XNNConvert -> qdint8 (per
        row) -> fully-connected with int8/int4 weights, fp32 bias and fp32
        output."""
        if weight.target in quant.DEQUANTIZE_PER_TENSOR:  # pt2e's per-tensor int8 weights
            w, w_scales, _ = self.quantized_weight(weight, NCHW)
            w = w.contiguous().to(torch.int8)
            filter_id = self.new_value(list(w.shape), w.numpy().tobytes(), datatype=QCINT8,
                                       quant_params=self.per_channel(
                                           w_scales.expand(w.shape[0]), 0))
        else:  # One filter per weight, however many linears read it.
            key = (weight.name, "qd8 filter")
            if key not in self.constant_ids:
                self.constant_ids[key] = self.dynamic_filter(weight)
            filter_id = self.constant_ids[key]
        qd = self.dynamic_input(source)
        bias_id = INVALID_ID if bias is None else self.value(bias)
        out, min_max = self.output_of(node)
        self.emit("XNNFullyConnected", "XNNFullyConnected", min_max, input1Id=qd,
                  filterId=filter_id, biasId=bias_id, outputId=out, flags=0)

    def lower_pool(self, node: torch.fx.Node, kind: str) -> None:
        args = list(node.args)
        kernel = _pairs(args[1])
        stride = _pairs(args[2]) if len(args) > 2 and args[2] else kernel
        padding = _pairs(args[3]) if len(args) > 3 else [0, 0]
        dilation = [1, 1]
        if kind == "XNNMaxPooling2d" and len(args) > 4:
            dilation = _pairs(args[4])
        x = self.value(args[0], NHWC)
        self.emit(kind, "_XNNPooling2D", paddingTop=padding[0], paddingRight=padding[1],
                  paddingBottom=padding[0], paddingLeft=padding[1], poolingHeight=kernel[0],
                  poolingWidth=kernel[1], strideHeight=stride[0], strideWidth=stride[1],
                  dilationHeight=dilation[0], dilationWidth=dilation[1], inputId=x,
                  outputId=self.define(node, NHWC), flags=FLAG_KEEP_DIMS)

    def lower_cat(self, node: torch.fx.Node) -> None:
        tensors = list(node.args[0])
        rank = len(_shape(node))
        axis = (node.args[1] if len(node.args) > 1 else 0) % rank
        layout = NHWC if rank == 4 and any(self.layout(t) == NHWC for t in tensors
                                           if t in self.values) else NCHW
        ids = [self.value(t, layout) for t in tensors]
        if layout == NHWC:
            axis = TO_NCHW[axis]
        ids += [INVALID_ID] * (4 - len(ids))
        self.emit(f"XNNConcatenate{len(tensors)}", "_XNNCat", axis=axis, input1Id=ids[0],
                  input2Id=ids[1], input3Id=ids[2], input4Id=ids[3],
                  outputId=self.define(node, layout), flags=0)

    def lower_permute(self, node: torch.fx.Node) -> None:
        source = node.args[0]
        rank = len(_shape(source))
        if node.target in (aten.t.default, aten.t_copy.default):
            perm = list(range(rank))[::-1]
        elif node.target in (aten.transpose.int, aten.transpose_copy.int):
            perm = list(range(rank))
            a, b = node.args[1] % rank, node.args[2] % rank
            perm[a], perm[b] = perm[b], perm[a]
        else:
            perm = [d % rank for d in node.args[1]]
        layout = self.layout(source) if rank == 4 else NCHW
        x = self.value(source, layout)
        if layout == NHWC:  # Permute the physical NHWC tensor straight to the result.
            perm = [TO_NCHW[p] for p in perm]
        self.emit("XNNStaticTranspose", "XNNStaticTranspose", numDims=rank, perm=perm,
                  inputId=x, outputId=self.define(node), flags=0)

    def lower_slice(self, node: torch.fx.Node) -> None:
        source = node.args[0]
        dims = _shape(source)
        if dims == _shape(node):  # x[:, :] keeps everything: no node needed.
            self.values[node] = self.values[source]
            return
        rank = len(dims)
        dim = (node.args[1] if len(node.args) > 1 else 0) % rank
        start = node.args[2] if len(node.args) > 2 and node.args[2] is not None else 0
        if start < 0:
            start += dims[dim]
        start = min(max(start, 0), dims[dim])
        offsets, sizes = [0] * rank, _shape(node)
        offsets[dim] = start
        layout = self.layout(source) if rank == 4 else NCHW
        x = self.value(source, layout)
        if layout == NHWC:
            offsets, sizes = _perm(offsets, TO_NHWC), _perm(sizes, TO_NHWC)
        self.emit("XNNStaticSlice", "XNNStaticSlice", numDims=rank, offsets=offsets, sizes=sizes,
                  inputId=x, outputId=self.define(node, layout), flags=0)

    def lower_pad(self, node: torch.fx.Node) -> None:
        source, pad = node.args[0], list(node.args[1])
        value = float(node.args[2]) if len(node.args) > 2 else 0.0
        rank = len(_shape(source))
        pre, post = [0] * rank, [0] * rank
        for k in range(len(pad) // 2):
            pre[rank - 1 - k], post[rank - 1 - k] = pad[2 * k], pad[2 * k + 1]
        layout = self.layout(source) if rank == 4 else NCHW
        x = self.value(source, layout)
        if layout == NHWC:
            pre, post = _perm(pre, TO_NHWC), _perm(post, TO_NHWC)
        self.emit("XNNStaticConstantPad", "XNNStaticConstantPad", prePaddings=pre,
                  postPaddings=post, paddingValue=value, inputId=x,
                  outputId=self.define(node, layout), flags=0)

    # the whole graph ---------------------------------------------------------------------------
    def serialize(self) -> bytes:
        graph = self.gm.graph
        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        output = next(n for n in graph.nodes if n.op == "output")
        outputs = list(output.args[0])
        for i, node in enumerate(placeholders):
            self.values[node] = (self.new_value(_shape(node), external_id=i,
                                                flags=FLAG_EXTERNAL_INPUT), NCHW)
        for position, node in enumerate(graph.nodes):
            if node.op == "call_function":
                self.debug_handle = position + 1
                self.lower(node)

        input_ids = [self.values[n][0] for n in placeholders]
        output_ids = []
        for i, node in enumerate(outputs):
            int8 = node.meta["val"].dtype == torch.int8  # A quantize leaving the partition.
            value_id = self.value(node, NCHW, keep_quantized=int8)
            tensor = self.tensors[value_id]
            if tensor.flags or tensor.constantBufferIdx:
                # Already external (an input passed through, or returned twice)
                # or a constant: an output needs a value of its own.
                copy_id = self.new_value(_shape(node))
                self.emit("XNNClamp", "_XNNNode1x1", None, inputId=value_id, outputId=copy_id,
                          flags=0)
                value_id, tensor = copy_id, self.tensors[copy_id]
            tensor.externalId = len(placeholders) + i
            tensor.flags = FLAG_EXTERNAL_OUTPUT
            output_ids.append(value_id)

        region, placed = payload.pack_constants(self.constant_blobs)
        xgraph = self.T("XNNGraph")()
        xgraph.version = "0"
        xgraph.xnodes = self.xnodes
        xgraph.xvalues = self.xvalues
        xgraph.numExterns = len(placeholders) + len(outputs)
        xgraph.inputIds = input_ids
        xgraph.outputIds = output_ids
        entries = [self.T("ConstantDataOffset")()]
        for offset, size in placed:
            entry = self.T("ConstantDataOffset")()
            entry.offset, entry.size = offset, size
            entries.append(entry)
        xgraph.constantData = entries
        return payload.serialize(xgraph, region)


def pack_int4(values: torch.Tensor) -> bytes:
    """XNNPACK's 4-bit layout (spec section 3): each value + 8, two per byte
    along a row, element 2k in the low nibble and 2k+1 in the high one, odd
    rows padded with a zero nibble."""
    rows, cols = values.shape
    shifted = (values.to(torch.int16) + 8).to(torch.uint8)
    if cols % 2:
        shifted = torch.cat([shifted, torch.zeros(rows, 1, dtype=torch.uint8)], dim=1)
    pairs = shifted.reshape(rows, -1, 2)
    return (pairs[..., 0] | (pairs[..., 1] << 4)).contiguous().numpy().tobytes()


class _ConstantValues(dict):
    """Constant values by node name, read from the partition's module on
    demand (quant.weight_kind's view of the partition's constants)."""

    def __init__(self, gm: torch.fx.GraphModule):
        super().__init__()
        self.nodes = {n.name: n for n in gm.graph.nodes if n.op == "get_attr"}
        self.gm = gm

    def __contains__(self, name) -> bool:
        return name in self.nodes

    def get(self, name, default=None):
        node = self.nodes.get(name)
        return default if node is None else _constant(self.gm, node)


def _is_dynamic(x) -> bool:
    """x = dequantize.tensor(quantize.tensor(...)): the dynamic pattern."""
    return isinstance(x, torch.fx.Node) and x.target in quant.DYNAMIC_DEQUANTIZE


class XnnpackBackend(BackendDetails):
    """Ahead-of-time half of upstream's "XnnpackBackend" delegate."""

    owns_constants = True

    @staticmethod
    def preprocess(graph_module: torch.fx.GraphModule,
                   compile_specs: List[CompileSpec]) -> PreprocessResult:
        gm = copy.deepcopy(graph_module)
        fold_batch_norms(gm)
        return PreprocessResult(_Serializer(gm).serialize())


register_backend(BACKEND_ID, XnnpackBackend)
